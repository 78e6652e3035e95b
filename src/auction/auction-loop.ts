/**
 * The auction loop of one network: on every new block (or every `everyBlocks` blocks) it builds the auction,
 * records the order events of its transitions, lets the solvers compete, stores the competition, and hands the
 * winning solution to the driver, which settles it through GPv2Settlement in the background while the next
 * auctions leave its orders out. After each range the indexer commits, the lifecycle writes `traded` and on-chain
 * `cancelled` events and mined submissions whose trades are indexed become settled.
 *
 * One cycle runs at a time; blocks that arrive meanwhile collapse into one more cycle on the newest block.
 *
 * @example
 *   const loop = startAuctionLoop({ network, db, nativePrices, logger, signal, indexer });
 *   await loop.stop();
 */
import type { Kysely } from 'kysely';
import type { Hex, LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainNetwork } from '../chain/network.js';
import type { BlockHead } from '../chain/block-feed.js';
import type { DB } from '../db/schema.js';
import type { NativePriceSource } from '../orderbook/pricing/trade-estimator.js';
import { runCompetition, type RankedSolution } from '../solver/competition.js';
import { Driver, type DriverHooks, type PreparedSettlement, type SettlementOutcome } from '../solver/driver.js';
import type { Solution, Solver } from '../solver/solution.js';
import { buildSolverEngines, notifyEngines } from '../solver-api/index.js';
import { AuctionBuilder } from './build-auction.js';
import { AuctionStore } from './auction-store.js';
import type { Auction } from './auction-types.js';
import { CompetitionStore } from './competition-store.js';
import { OrderLifecycle } from './order-lifecycle.js';
import { SettlementSubmissions } from './settlement-submissions.js';

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

export interface AuctionLoopOptions {
  network: ChainNetwork;
  db: Kysely<DB>;
  /** native prices of the auction (the order book's source: AmmNativePrice) */
  nativePrices: NativePriceSource;
  logger: AuctionLoopLogger;
  signal: AbortSignal;
  /** the network's indexer; without it no `traded`/on-chain `cancelled` events are written by this loop */
  indexer?: IndexedSource | null;
  /** the allow-listed solver account; default: the devnet's 'solver' account, none on other chains (then nothing is submitted) */
  solverAccount?: LocalAccount | null;
  /** default: the CoW matcher and the AMM router, through the Solver Engine API codec (`defaultSolvers`) */
  solvers?: Solver[];
  /** build an auction every this many blocks (default 1) */
  everyBlocks?: number;
  /** blocks a submission has to be mined in (default 10) */
  deadlineBlocks?: number;
  bannedAddresses?: ReadonlySet<string>;
  deniedTokens?: ReadonlySet<string>;
  driverHooks?: DriverHooks;
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

function defaultSolverAccount(network: ChainNetwork): LocalAccount | null {
  const solver = network.devnet?.deployment.accounts.find((a) => a.role === 'solver');
  return solver ? privateKeyToAccount(solver.privateKey) : null;
}

/** The built-in engines (CoW matcher, AMM router), reached through the Solver Engine API's codec in process. */
export function defaultSolvers(network: ChainNetwork): Solver[] {
  return buildSolverEngines(network, { engines: [], timeLimitMs: 2_000 }).solvers;
}

export function startAuctionLoop(options: AuctionLoopOptions): RunningAuctionLoop {
  const { network, db, logger, signal } = options;
  const chainId = network.chainId;
  const everyBlocks = Math.max(1, options.everyBlocks ?? 1);
  const deadlineBlocks = options.deadlineBlocks ?? 10;
  const auctions = new AuctionStore(db, chainId);
  const competitions = new CompetitionStore(db, chainId);
  const lifecycle = new OrderLifecycle(db, chainId);
  const submissions = new SettlementSubmissions(db, chainId);
  const builder = new AuctionBuilder({
    chainId,
    db,
    reader: network.reader,
    settlement: network.settlement,
    vaultRelayer: network.vaultRelayer,
    hooksTrampoline: network.hooksTrampoline,
    nativePrices: options.nativePrices,
    bannedAddresses: options.bannedAddresses,
    deniedTokens: options.deniedTokens,
  });
  const solvers = options.solvers ?? defaultSolvers(network);
  const account = options.solverAccount === undefined ? defaultSolverAccount(network) : options.solverAccount;
  const trader = account && network.devnet?.deployment.accounts.find((a) => a.role === 'trader' && a.address.toLowerCase() === account.address.toLowerCase());
  if (trader) throw new Error(`auction: ${account!.address} is a trader account of the devnet; settlements are sent from the solver account only`);
  const driver = account
    ? new Driver({ client: network.client, rpcUrl: network.rpcUrl, settlement: network.settlement, account, submissions, logger, deadlineBlocks, hooks: options.driverHooks })
    : null;
  if (!driver) logger.warn({ chainId }, 'auction: no solver account for this network; auctions and competitions run, nothing is settled');

  const listeners = new Set<(report: CycleReport) => void>();
  const background = new Set<Promise<unknown>>();
  let last: CycleReport | null = null;
  let lastBlock = -Infinity;
  let running: Promise<CycleReport | null> | null = null;
  let queued: BlockHead | null = null;
  const recovered = driver ? driver.recover().catch((err) => logger.warn({ chainId, err }, 'auction: could not resolve earlier submissions')) : Promise.resolve();

  const track = <T>(p: Promise<T>): Promise<T> => {
    background.add(p);
    void p.finally(() => background.delete(p)).catch(() => {});
    return p;
  };

  async function cycle(block: { number: bigint; timestamp: bigint }): Promise<CycleReport> {
    await recovered;
    const head = Number(block.number);
    const inFlight = await submissions.inFlightOrderUids(head);
    const buildStarted = performance.now();
    const built = await builder.build(block, inFlight);
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    const auction = await auctions.save(built.auction);
    await lifecycle.afterAuction(
      auction.orders.map((o) => o.uid),
      built.excluded,
    );
    await lifecycle.expire(Number(block.timestamp));
    // the winner is the best solution whose settlement simulates; its prepared transaction is kept
    const accepted: { plan: PreparedSettlement | null } = { plan: null };
    const accept = driver
      ? async (solution: Solution) => {
          const prepared = await driver.prepare(solution, auction.id);
          if (prepared.ok) accepted.plan = prepared;
          return prepared;
        }
      : null;
    const hooked = auction.orders.some((o) => o.hookGas > 0n);
    const gasPrice = hooked ? await network.reader.gasPrice().catch(() => 0n) : 0n;
    const ranked = await runCompetition(auction, solvers, accept, logger, gasPrice);
    const winner = ranked.find((r) => r.isWinner) ?? null;
    let settlement: Promise<SettlementOutcome> | null = null;
    if (ranked.length > 0) {
      await competitions.save(auction, ranked, driver?.solverAddress ?? null, head + deadlineBlocks);
      const executing = winner ? winner.solution.trades.map((t) => t.order.uid) : [];
      const considered = ranked.filter((r) => r !== winner).flatMap((r) => r.solution.trades.map((t) => t.order.uid));
      await lifecycle.afterCompetition(executing, [...new Set(considered)]);
    }
    if (winner && driver && accepted.plan) {
      // recorded (its orders in flight) before the next auction is built; sent and followed in the background
      const { outcome } = await driver.submit(accepted.plan, winner.solution.trades.map((t) => t.order.uid), signal);
      settlement = track(outcome);
    }
    // each solver engine hears how its solutions fared (the winner's once its settlement is over)
    void track(notifyEngines(ranked, settlement).catch((err) => logger.warn({ chainId, err }, 'auction: notifying solver engines failed')));
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
        queued = null;
        if (next) schedule(next);
      });
    running = p;
    return track(p);
  }

  function schedule(block: BlockHead): void {
    if (signal.aborted) return;
    if (running) {
      queued = block;
      return;
    }
    if (Number(block.number) - lastBlock < everyBlocks) return;
    void runCycle(block);
  }

  const unsubscribeBlocks = network.reader.onBlock((block) => schedule(block), signal);
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
      unsubscribeIndexer?.();
      await Promise.allSettled([...background]);
    },
  };
}

/** What `startBackgroundLoops` (src/loops.ts) has for each network. */
export interface AuctionLoopsDeps {
  networks: ChainNetwork[];
  db: Kysely<DB>;
  nativePrices: (network: ChainNetwork) => NativePriceSource;
  logger: AuctionLoopLogger;
  signal: AbortSignal;
  /** the indexer of each network, by network name */
  indexers?: Map<string, IndexedSource>;
  everyBlocks?: number;
  bannedAddresses?: ReadonlySet<string>;
  deniedTokens?: ReadonlySet<string>;
}

/** One auction loop per network; `stop()` stops them all. */
export function startAuctionLoops(deps: AuctionLoopsDeps): { loops: Map<string, RunningAuctionLoop>; stop(): Promise<void> } {
  const loops = new Map<string, RunningAuctionLoop>();
  for (const network of deps.networks) {
    loops.set(
      network.name,
      startAuctionLoop({
        network,
        db: deps.db,
        nativePrices: deps.nativePrices(network),
        logger: deps.logger,
        signal: deps.signal,
        indexer: deps.indexers?.get(network.name) ?? null,
        everyBlocks: deps.everyBlocks,
        bannedAddresses: deps.bannedAddresses,
        deniedTokens: deps.deniedTokens,
      }),
    );
  }
  return {
    loops,
    async stop() {
      await Promise.allSettled([...loops.values()].map((l) => l.stop()));
    },
  };
}

