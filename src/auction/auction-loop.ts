/**
 * The auction loop of one network: on every new block (or every `everyBlocks` blocks) it builds the auction,
 * records the order events of its transitions, lets the solvers compete, stores the competition, and hands the
 * winning solution to the driver, which settles it through GPv2Settlement in the background while the next
 * auctions leave its orders out. After each range the indexer commits, the lifecycle writes `traded` and on-chain
 * `cancelled` events and mined submissions whose trades are indexed become settled.
 *
 * One cycle runs at a time; blocks that arrive meanwhile collapse into one more cycle on the newest block.
 *
 * When no solution's settlement simulates, the orders that make the best one revert — alone or in combination — are
 * looked for (`findFailingOrders`), excluded for `exclusionBlocks` blocks with a `filtered` order event naming why,
 * and the competition runs again in the same auction without them, so one bad order no longer blocks its batch.
 * The same happens when an engine's merged solution fails although one of its parts wins (the part stays the winner
 * when the competition without those orders finds none). Tokens
 * whose orders keep failing are left out of auctions for a while (`BadTokenDetector`).
 *
 * The loop builds nothing itself: the composition root (src/loops.ts, `wireAuctionLoop`) gives it its builder,
 * stores, solvers and driver.
 *
 * @example
 *   const loop = startAuctionLoop({ network, builder, stores, solvers, driver, logger, signal, indexer });
 *   await loop.stop();
 */
import type { Hex } from 'viem';
import type { ChainNetwork } from '../chain/network.js';
import type { BlockHead } from '../chain/block-feed.js';
import { runCompetition, type RankedSolution } from '../solver/competition.js';
import { scoreSolution } from '../solver/solution.js';
import type { Driver, PreparedSettlement, SettlementOutcome } from '../solver/driver.js';
import { findFailingOrders } from '../solver/failing-orders.js';
import { BadTokenDetector } from './bad-tokens.js';
import type { Solution, Solver } from '../solver/solution.js';
import type { AuctionBuilder } from './build-auction.js';
import type { AuctionStore } from './auction-store.js';
import type { Auction, ExcludedOrder } from '../solver/auction-types.js';
import type { CompetitionStore } from './competition-store.js';
import type { OrderExclusions } from './order-exclusions.js';
import type { FeeRecords } from './fee-records.js';
import type { OrderLifecycle } from './order-lifecycle.js';
import type { SettlementSubmissions } from '../solver/settlement-submissions.js';

export interface AuctionLoopLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What the loop needs from the indexer: a listener called after each committed range, with the orders it touched. */
export interface IndexedSource {
  onIndexed(listener: (fromBlock: number, toBlock: number, touched: { orderUids: Hex[] }) => void | Promise<void>): () => void;
}

/** The stores of one network's auctions. */
export interface AuctionLoopStores {
  auctions: AuctionStore;
  competitions: CompetitionStore;
  lifecycle: OrderLifecycle;
  submissions: SettlementSubmissions;
  exclusions: OrderExclusions;
  /** what the driver charged each order of a submitted solution (issue 23); absent: not recorded */
  fees?: FeeRecords;
}

export interface AuctionLoopOptions {
  /** the chain: its block stream, client and reader */
  network: ChainNetwork;
  builder: AuctionBuilder;
  stores: AuctionLoopStores;
  solvers: Solver[];
  /** sends the winners; null: auctions and competitions run, nothing is settled */
  driver: Driver | null;
  logger: AuctionLoopLogger;
  signal: AbortSignal;
  /** the network's indexer; without it no `traded`/on-chain `cancelled` events are written by this loop */
  indexer?: IndexedSource | null;
  /** build an auction every this many blocks (default 1) */
  everyBlocks?: number;
  /** blocks a submission has to be mined in (the competition's deadline block; default 10) */
  deadlineBlocks?: number;
  /** blocks an order that made a settlement's simulation revert stays out of auctions (default 20) */
  exclusionBlocks?: number;
  /**
   * Subscribes to "an order was placed" (this process's intake): with one auction per block, a cycle then starts
   * at once on the current head instead of waiting for the next block, so the order can settle in the next block.
   */
  orderPlaced?: ((listener: () => void) => () => void) | null;
  /** while `paused`, neither blocks nor placed orders start a cycle (`runOnce` still does): the control API's hold */
  gate?: AuctionGate;
  /**
   * Told each competition's ranking and its settlement's outcome (the composition root passes the Solver Engine
   * API's `notifyEngines`, so external engines learn how their solutions fared); default: nobody.
   */
  afterCompetition?: ((ranked: RankedSolution[], settlement: Promise<SettlementOutcome> | null) => Promise<void>) | null;
  /** whether a solution is the merge of one engine's parts (the Solver Engine API knows; default: none is) */
  isMergedSolution?: ((solution: Solution) => boolean) | null;
  /** tokens that keep making settlements fail are left out for a while (default: a detector with its defaults) */
  badTokens?: BadTokenDetector;
  /**
   * A winner whose score (surplus + protocol fees, native token) does not cover its settlement's gas at the
   * current gas price is not submitted (issue 23 / review M7: the operator never pays for a settlement at a
   * loss); the next best one is tried. On for real chains.
   */
  requireGasCoverage?: boolean;
}

/** Holds auctions back while `paused` (shared by every auction loop of a node, across restarts of the loops). */
export interface AuctionGate {
  paused: boolean;
}

export interface CycleReport {
  auction: Auction;
  excluded: number;
  inFlight: number;
  ranked: RankedSolution[];
  winner: RankedSolution | null;
  /** the settlement outcome, when a winner was submitted (resolves when it is mined, reverted or dropped) */
  settlement: Promise<SettlementOutcome> | null;
  /** time the auction took to build (metrics) */
  buildSeconds: number;
}

export interface RunningAuctionLoop {
  readonly auctions: AuctionStore;
  readonly competitions: CompetitionStore;
  readonly lifecycle: OrderLifecycle;
  readonly submissions: SettlementSubmissions;
  readonly driver: Driver | null;
  /** the newest cycle's report */
  readonly last: CycleReport | null;
  /** called after every cycle (tests wait on it) */
  onCycle(listener: (report: CycleReport) => void): () => void;
  /** runs one cycle now on the latest block (tests; normally blocks drive it) */
  runOnce(): Promise<CycleReport | null>;
  /** resolves when no cycle is running or waiting */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function startAuctionLoop(options: AuctionLoopOptions): RunningAuctionLoop {
  const { network, logger, signal, builder, solvers, driver } = options;
  const { auctions, competitions, lifecycle, submissions, exclusions } = options.stores;
  const chainId = network.chainId;
  const everyBlocks = Math.max(1, options.everyBlocks ?? 1);
  const deadlineBlocks = options.deadlineBlocks ?? 10;
  const exclusionBlocks = options.exclusionBlocks ?? 20;
  const badTokens = options.badTokens ?? new BadTokenDetector();
  if (!driver) logger.warn({ chainId }, 'auction: no solver account for this network; auctions and competitions run, nothing is settled');

  const listeners = new Set<(report: CycleReport) => void>();
  const background = new Set<Promise<unknown>>();
  let last: CycleReport | null = null;
  let lastBlock = -Infinity;
  let running: Promise<CycleReport | null> | null = null;
  let queued: BlockHead | null = null;
  const recover = () => (driver ? driver.recover().catch((err) => logger.warn({ chainId, err }, 'auction: could not resolve earlier submissions')) : Promise.resolve());
  const recovered = recover();
  /** the queued cycle was asked for by a placed order: it runs even on a head already auctioned */
  let queuedForOrders = false;
  /** the last head that had its one extra auction for placed orders */
  let extraFor = -Infinity;

  const track = <T>(p: Promise<T>): Promise<T> => {
    background.add(p);
    void p.finally(() => background.delete(p)).catch(() => {});
    return p;
  };

  /**
   * Runs the competition; when the best solution's settlement fails to simulate, excludes the orders that make
   * it revert and runs it again in the same auction without them. Returns the ranking to store and the winner's plan.
   */
  async function compete(auction: Auction, head: number): Promise<{ ranked: RankedSolution[]; plan: PreparedSettlement | null }> {
    // the winner is the best solution whose settlement simulates; its prepared transaction is kept
    let plan: PreparedSettlement | null = null;
    const hooked = auction.orders.some((o) => o.hookGas > 0n);
    const gasPrice = hooked || options.requireGasCoverage ? await network.reader.gasPrice().catch(() => 0n) : 0n;
    const accept = driver
      ? async (solution: Solution) => {
          const prepared = await driver.prepare(solution, auction.id);
          if (prepared.ok && options.requireGasCoverage) {
            const score = scoreSolution(solution, auction.prices);
            const cost = prepared.gasEstimate * gasPrice;
            if (score < cost) return { ok: false as const, reason: `unprofitable: score ${score} does not cover the settlement's gas (${prepared.gasEstimate} × ${gasPrice} wei)` };
          }
          if (prepared.ok) plan = prepared;
          return prepared;
        }
      : null;
    const ranked = await runCompetition(auction, solvers, accept, logger, gasPrice);
    if (!driver) return { ranked, plan };
    const winner = ranked.find((r) => r.isWinner);
    // the best solution that failed to simulate, when nothing won or when it is a merge of an engine's parts (one of
    // which may have won): the orders that make it fail — alone or together — are left out and the competition runs
    // again without them (the merge of the rest may then win; else the part that won stays the winner). A single
    // solution that fails while another wins blames its solver (which hears `simulationFailed`), not the orders;
    // bisecting re-asks the solver, which an external engine answers slowly.
    const failed = ranked.find((r) => r.filteredOut && r.reason?.startsWith('simulation:') && (!winner || (r.ranking < winner.ranking && options.isMergedSolution?.(r.solution))));
    const solver = failed && solvers.find((s) => s.name === failed.solution.solver);
    if (!failed || !solver) return { ranked, plan };
    // the search re-asks a solver for parts of the orders: an external engine would be asked to confirm its own
    // failure (one that steals or reverts on purpose would get honest orders excluded), so its failures are probed
    // with the node's own engines, whose failing settlements do blame the orders (a bad token fails theirs too)
    const own = solvers.filter((s) => s.trusted !== false);
    const prober: Solver | null = solver.trusted !== false ? solver : own.length === 0 ? null : {
      name: own.map((s) => s.name).join('+'),
      solve: async (a) => (await Promise.all(own.map((s) => s.solve(a).catch(() => [])))).flat(),
    };
    if (!prober) return { ranked, plan };
    const out = await excludeFailing(auction, head, prober, failed.solution);
    if (out.size === 0) return { ranked, plan };
    const partPlan = plan;
    plan = null;
    const again = await runCompetition({ ...auction, orders: auction.orders.filter((o) => !out.has(o.uid)) }, solvers, accept, logger, gasPrice);
    // nothing settles without them, yet a part of the merge did: that part stays the winner
    if (winner && !again.some((r) => r.isWinner)) return { ranked, plan: partPlan };
    // the record keeps the solutions that failed, after the new ones
    const all = [...again, ...ranked.filter((r) => r.filteredOut)].map((r, i) => ({ ...r, ranking: i + 1 }));
    return { ranked: all, plan };
  }

  /**
   * Finds the orders that make `failed` revert (alone, or a combination of them), excludes them for a while with
   * an order event, and blames their tokens to the bad-token detector. Returns the excluded uids.
   */
  async function excludeFailing(auction: Auction, head: number, solver: Solver, failed: Solution): Promise<Set<Hex>> {
    const bad = await findFailingOrders(auction, solver, failed, (s) => driver!.prepare(s, auction.id));
    if (bad.length === 0) return new Set();
    const reasonOf = (b: (typeof bad)[number]) => `simulation_failed: ${b.with.length > 0 ? `together with ${b.with.join(', ')}: ` : ''}${b.reason.replace(/^simulation: /, '')}`.slice(0, 300);
    const excluded: ExcludedOrder[] = bad.map((b) => ({ uid: b.uid, label: 'filtered', reason: reasonOf(b) }));
    await exclusions.exclude(excluded, head + exclusionBlocks);
    await lifecycle.afterExclusion(excluded);
    logger.warn({ chainId, auctionId: auction.id, excluded: excluded.map((e) => e.uid), untilBlock: head + exclusionBlocks }, 'auction: orders that make the settlement revert are left out for a while');
    const byUid = new Map(auction.orders.map((o) => [o.uid, o]));
    const tokens = bad.flatMap((b) => [b.uid, ...b.with]).flatMap((uid) => (byUid.has(uid) ? [byUid.get(uid)!.sellToken, byUid.get(uid)!.buyToken] : []));
    const newlyBad = badTokens.blame(tokens, auction.id, head);
    if (newlyBad.length > 0) logger.warn({ chainId, tokens: newlyBad, auctionId: auction.id }, 'auction: tokens that keep making settlements fail are left out for a while');
    return new Set(excluded.map((e) => e.uid));
  }

  async function cycle(block: { number: bigint; timestamp: bigint }): Promise<CycleReport> {
    await recovered;
    const head = Number(block.number);
    if (driver) await recover();
    const inFlight = await submissions.inFlightOrderUids(head);
    // orders excluded for making a settlement revert are held like orders in flight
    for (const uid of await exclusions.active(head)) inFlight.add(uid);
    const buildStarted = performance.now();
    const built = await builder.build(block, inFlight);
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    // orders of tokens the bad-token detector holds out
    const badNow = badTokens.bad(head);
    if (badNow.size > 0) {
      const keep = built.auction.orders.filter((o) => !badNow.has(o.sellToken) && !badNow.has(o.buyToken));
      const held = built.auction.orders.filter((o) => !keep.includes(o));
      built.auction = { ...built.auction, orders: keep };
      built.excluded = [...built.excluded, ...held.map((o): ExcludedOrder => ({ uid: o.uid, label: 'filtered', reason: 'bad_token' }))];
    }
    const auction = await auctions.save(built.auction);
    await lifecycle.afterAuction(
      auction.orders.map((o) => o.uid),
      built.excluded,
    );
    await lifecycle.expire(Number(block.timestamp));
    const { ranked, plan } = await compete(auction, head);
    const winner = ranked.find((r) => r.isWinner) ?? null;
    let settlement: Promise<SettlementOutcome> | null = null;
    if (ranked.length > 0) {
      await competitions.save(auction, ranked, driver?.solverAddress ?? null, head + deadlineBlocks);
      const executing = winner ? winner.solution.trades.map((t) => t.order.uid) : [];
      const considered = ranked.filter((r) => r !== winner).flatMap((r) => r.solution.trades.map((t) => t.order.uid));
      await lifecycle.afterCompetition(executing, [...new Set(considered)]);
    }
    if (winner && driver && plan) {
      // the fees each order is charged, kept before the settlement can land (the order book reads them back)
      await options.stores.fees?.record(auction.id, winner.solution.trades);
      // recorded (its orders in flight) before the next auction is built; sent and followed in the background
      const { outcome } = await driver.submit(plan, winner.solution.trades.map((t) => t.order.uid), signal);
      settlement = track(outcome);
    }
    // each solver engine hears how its solutions fared (the winner's once its settlement is over)
    if (options.afterCompetition) void track(options.afterCompetition(ranked, settlement).catch((err) => logger.warn({ chainId, err }, 'auction: notifying solver engines failed')));
    logger.debug(
      { chainId, auctionId: auction.id, block: head, orders: auction.orders.length, excluded: built.excluded.length, inFlight: built.inFlight, solutions: ranked.length, winner: winner?.solution.solver ?? null },
      'auction: cycle done',
    );
    return { auction, excluded: built.excluded.length, inFlight: built.inFlight, ranked, winner, settlement, buildSeconds };
  }

  /** Runs one cycle; the only place a cycle starts, so cycles never overlap. */
  function runCycle(block: { number: bigint; timestamp: bigint }): Promise<CycleReport | null> {
    lastBlock = Number(block.number);
    const p: Promise<CycleReport | null> = cycle(block)
      .then((report) => {
        last = report;
        for (const l of listeners) l(report);
        return report;
      })
      .catch((err) => {
        if (!signal.aborted) logger.error({ chainId, err }, 'auction: cycle failed');
        return null;
      })
      .finally(() => {
        if (running === p) running = null;
        const next = queued;
        const force = queuedForOrders;
        queued = null;
        queuedForOrders = false;
        if (next) schedule(next, force);
      });
    running = p;
    return track(p);
  }

  /** `force`: an order was placed, run a cycle even if this head was auctioned already */
  function schedule(block: BlockHead, force = false): void {
    if (signal.aborted || options.gate?.paused) return;
    if (running) {
      if (!queued || block.number >= queued.number) queued = block;
      queuedForOrders ||= force;
      return;
    }
    if (Number(block.number) - lastBlock < everyBlocks) {
      // a head already auctioned: only for placed orders, and then once (one extra auction per block at most;
      // orders placed after it wait for the next block)
      if (!force || extraFor >= Number(block.number)) return;
      extraFor = Number(block.number);
    }
    void runCycle(block);
  }

  const unsubscribeBlocks = network.reader.onBlock((block) => schedule(block), signal);
  // the cycle trigger for new orders (one auction per block only): the head the block feed last saw
  const unsubscribeOrders = everyBlocks === 1 ? options.orderPlaced?.(() => {
    const head = network.reader.blockFeed.latest;
    if (head) schedule(head, true);
  }) : undefined;
  const unsubscribeIndexer = options.indexer?.onIndexed(async (_from, _to, touched) => {
    await submissions.markIndexed();
    await lifecycle.afterIndexed(touched.orderUids);
  });

  return {
    auctions,
    competitions,
    lifecycle,
    submissions,
    driver,
    get last() {
      return last;
    },
    onCycle(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async runOnce() {
      while (running) await running;
      const head = await network.client.getBlock({ blockTag: 'latest' });
      return runCycle({ number: head.number!, timestamp: head.timestamp });
    },
    async idle() {
      while (running) await running;
    },
    async stop() {
      unsubscribeBlocks();
      unsubscribeOrders?.();
      unsubscribeIndexer?.();
      await Promise.allSettled([...background]);
    },
  };
}
