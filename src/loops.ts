/**
 * Background loops of a running node, per network: the event indexer (chain → database), the auction loop
 * (auction → solvers → driver → lifecycle events) that hangs off it. With a shared PostgreSQL they run on
 * one replica per chain (advisory-lock leadership); each takes the AbortSignal and stops cleanly.
 */
import type { Logger } from 'pino';
import type { Kysely } from 'kysely';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Database } from './db/connection.js';
import type { DB } from './db/schema.js';
import { indexedFactory, type ChainNetwork } from './chain/network.js';
import type { OrderBookBuild } from './orderbook/build-services.js';
import type { NativePriceSource } from './orderbook/pricing/trade-estimator.js';
import { Indexer } from './chain/indexer/indexer.js';
import { indexPoolHistory } from './chain/indexer/pool-history.js';
import { runAsLeader, type LeadershipLease } from './db/leadership.js';
import { vacuumTables } from './db/vacuum.js';
import { sleep } from './infra/abortable-sleep.js';
import { startAuctionLoop, type AuctionGate, type AuctionLoopLogger, type IndexedSource, type RunningAuctionLoop } from './auction/auction-loop.js';
import { AuctionBuilder, type AuctionFeeSchedule } from './auction/build-auction.js';
import { DEFAULT_FEE_POLICIES, parseFeeSchedule } from './protocol/index.js';
import { AuctionStore } from './auction/auction-store.js';
import { CompetitionStore } from './auction/competition-store.js';
import { OrderExclusions } from './auction/order-exclusions.js';
import { FeeRecords } from './auction/fee-records.js';
import { OrderLifecycle } from './auction/order-lifecycle.js';
import { SettlementSubmissions } from './solver/settlement-submissions.js';
import { Driver, type DriverHooks } from './solver/driver.js';
import type { Solver } from './solver/solution.js';
import { producerFor, type ProducerSettings } from './aux/notifications/index.js';
import type { Metrics } from './metrics/metrics.js';
import { recordAuctionCycles, recordIndexerLag } from './metrics/loop-metrics.js';
import { HookIndexer } from './aux/hooks/index.js';
import { EthFlowIngest } from './orderbook/orders/ethflow-ingest.js';
import { EthFlowRefunder, type RefundSelection } from './auction/ethflow-refunder.js';
import { mnemonicToAccount } from 'viem/accounts';
import { DEV_MNEMONIC } from './chain/devnet/deployment.js';
import { resolveSolverAccount } from './solver/solver-account.js';
import type { Hex } from 'viem';
import { buildSolverEngines, notifyEngines, originOf, type SolverEngines } from './solver-api/index.js';

export interface LoopDeps {
  networks: ChainNetwork[];
  database: Database;
  orderBooks: Map<string, OrderBookBuild>;
  logger: Logger;
  signal: AbortSignal;
  onFatal: (reason: string) => void;
  /** PostgreSQL URL when replicas share a database: the loops of a chain then run on one replica only */
  databaseUrl: string | null;
  bannedAddresses: ReadonlySet<string>;
  deniedTokens: ReadonlySet<string>;
  auctions: { enabled: boolean; everyBlocks: number };
  /** the FEE_* schedule (default: production's documented one) */
  fees?: AuctionFeeSchedule | null;
  /** SOLVER_PRIVATE_KEY: the driver's account on real chains (allow-listed there); null: nothing is settled on them */
  solverPrivateKey?: Hex | null;
  /** ETHFLOW_REFUNDER_KEY: the eth-flow refunder's account on real chains (none: no refunder there, forks aside) */
  ethflowRefunderKey?: Hex | null;
  /** the competing solver engines of each network, by network name (default: the built-ins) */
  solverEngines?: Map<string, SolverEngines>;
  /** the notification producer of each chain (with its other loops); onDeliveries wakes this replica's dispatcher */
  notifications?: ProducerSettings & { pollIntervalMs: number; onDeliveries: (count: number) => void };
  metrics?: Metrics;
  /** holds every auction loop back while paused (the control API; deterministic mode starts paused) */
  auctionGate?: AuctionGate;
}

export interface RunningLoops {
  indexers: Map<string, Indexer>;
  /** the auction loop of each network, while this replica leads it */
  auctionLoops: Map<string, RunningAuctionLoop>;
  stop(): Promise<void>;
}

/** What the auction loop of one network is wired from. */
export interface AuctionLoopWiring {
  network: ChainNetwork;
  db: Kysely<DB>;
  /** native prices of the auction (the order book's source: AmmNativePrice) */
  nativePrices: NativePriceSource;
  logger: AuctionLoopLogger;
  signal: AbortSignal;
  indexer?: IndexedSource | null;
  /** the allow-listed solver account; default: the devnet's 'solver' account, none on other chains (then nothing is submitted) */
  solverAccount?: LocalAccount | null;
  /** default: the CoW matcher and the AMM router */
  solvers?: Solver[];
  everyBlocks?: number;
  deadlineBlocks?: number;
  exclusionBlocks?: number;
  bannedAddresses?: ReadonlySet<string>;
  deniedTokens?: ReadonlySet<string>;
  driverHooks?: DriverHooks;
  /** "an order was placed" on this process: the loop then auctions the current head at once (next-block fulfilment) */
  orderPlaced?: ((listener: () => void) => () => void) | null;
  gate?: AuctionGate;
  /** the leadership the loop runs under: its settlement transactions are recorded only while it is current */
  lease?: LeadershipLease | null;
  /** protocol and partner fees; undefined: production's documented schedule with a 1 % partner cap; null: none */
  fees?: AuctionFeeSchedule | null;
  /** winners must cover their gas (default: on real chains, off on the devnet) */
  requireGasCoverage?: boolean;
}

/** FEE_POLICIES' default as a schedule: what a loop wired without configuration charges. */
export const DEFAULT_FEE_SCHEDULE: AuctionFeeSchedule = { policies: parseFeeSchedule(DEFAULT_FEE_POLICIES), maxPartnerFee: 0.01, upcoming: null };

function defaultSolverAccount(network: ChainNetwork): LocalAccount | null {
  const solver = network.devnet?.deployment.accounts.find((a) => a.role === 'solver');
  return solver ? privateKeyToAccount(solver.privateKey) : null;
}

/**
 * The built-in engines of a network (CoW matcher, AMM router), reached through the Solver Engine API's codec; they
 * solve on worker threads, which `close()` ends (a loop that built them closes them when it stops).
 */
export function defaultSolvers(network: ChainNetwork): { solvers: Solver[]; close: () => Promise<void> } {
  const engines = buildSolverEngines(network, { engines: [], timeLimitMs: 2_000 });
  return { solvers: engines.solvers, close: engines.close };
}

/** Builds the auction loop of one network — its builder, stores, solvers and driver — and starts it. */
export function wireAuctionLoop(w: AuctionLoopWiring): RunningAuctionLoop {
  const { network, db } = w;
  const chainId = network.chainId;
  const submissions = new SettlementSubmissions(db, chainId, w.lease ?? null);
  const builder = new AuctionBuilder({
    chainId,
    db,
    reader: network.reader,
    settlement: network.settlement,
    vaultRelayer: network.vaultRelayer,
    hooksTrampoline: network.hooksTrampoline,
    nativePrices: w.nativePrices,
    bannedAddresses: w.bannedAddresses,
    deniedTokens: w.deniedTokens,
    fees: w.fees === undefined ? DEFAULT_FEE_SCHEDULE : w.fees,
  });
  const account = w.solverAccount === undefined ? defaultSolverAccount(network) : w.solverAccount;
  const trader = account && network.devnet?.deployment.accounts.find((a) => a.role === 'trader' && a.address.toLowerCase() === account.address.toLowerCase());
  if (trader) throw new Error(`auction: ${account!.address} is a trader account of the devnet; settlements are sent from the solver account only`);
  const driver = account
    ? new Driver({ client: network.client, rpcUrl: network.rpcUrl, settlement: network.settlement, account, submissions, logger: w.logger, deadlineBlocks: w.deadlineBlocks, hooks: w.driverHooks })
    : null;
  // engines built here (none passed) are this loop's own: their worker threads end with it
  const own = w.solvers ? null : defaultSolvers(network);
  const loop = startAuctionLoop({
    network,
    builder,
    stores: {
      auctions: new AuctionStore(db, chainId),
      competitions: new CompetitionStore(db, chainId),
      lifecycle: new OrderLifecycle(db, chainId),
      submissions,
      exclusions: new OrderExclusions(db, chainId),
      fees: new FeeRecords(db, chainId),
    },
    solvers: w.solvers ?? own!.solvers,
    driver,
    logger: w.logger,
    signal: w.signal,
    indexer: w.indexer,
    everyBlocks: w.everyBlocks,
    deadlineBlocks: w.deadlineBlocks,
    exclusionBlocks: w.exclusionBlocks,
    orderPlaced: w.orderPlaced,
    gate: w.gate,
    afterCompetition: notifyEngines,
    isMergedSolution: (solution) => originOf(solution)?.merged ?? false,
    requireGasCoverage: w.requireGasCoverage ?? !network.devnet,
  });
  if (!own) return loop;
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= own.close().catch(() => undefined));
  w.signal?.addEventListener('abort', () => void loop.idle().then(close, close), { once: true });
  return Object.assign(Object.create(loop) as RunningAuctionLoop, {
    async stop() {
      try {
        await loop.stop();
      } finally {
        await close();
      }
    },
  });
}

/**
 * The eth-flow refunder of a network, if it has one: the devnet refunds every expired order from its deployer account
 * (idle after set-up); a fork (an anvil or hardhat node) likewise, from ETHFLOW_REFUNDER_KEY or else the tenth
 * account of the standard test mnemonic (funded by anvil, used by nobody else); a real chain only with
 * ETHFLOW_REFUNDER_KEY, with production's selection rules.
 */
async function ethFlowRefunderFor(network: ChainNetwork, db: Kysely<DB>, key: Hex | null, logger: Logger): Promise<EthFlowRefunder | null> {
  if (network.ethFlows.length === 0) return null;
  let account: LocalAccount | null = null;
  let mode: RefundSelection = 'production';
  if (network.devnet) {
    const deployer = network.devnet.deployment.accounts.find((a) => a.role === 'deployer');
    account = deployer ? privateKeyToAccount(deployer.privateKey) : null;
    mode = 'all';
  } else {
    const client = (await network.client.request({ method: 'web3_clientVersion' as never }).catch(() => '')) as string;
    const fork = /anvil|hardhat/i.test(client);
    if (fork) mode = 'all';
    account = key ? privateKeyToAccount(key) : fork ? mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 9 }) : null;
  }
  if (!account) return null;
  return new EthFlowRefunder({ chainId: network.chainId, db, client: network.client, rpcUrl: network.rpcUrl, account, contracts: network.ethFlows, mode, logger });
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

export function startBackgroundLoops(deps: LoopDeps): RunningLoops {
  const running: Promise<unknown>[] = [];
  // the loops running now, by name (a slow stop says which it waits for)
  const pending = new Set<string>();
  const track = <T>(name: string, loop: Promise<T> | null | undefined): Promise<T> | null | undefined => {
    if (!loop) return loop;
    pending.add(name);
    void loop.finally(() => pending.delete(name)).catch(() => {});
    return loop;
  };
  const indexers = new Map<string, Indexer>();
  const auctionLoops = new Map<string, RunningAuctionLoop>();
  for (const network of deps.networks) {
    const log = deps.logger.child({ chain: network.name, loop: 'indexer' });
    const indexer = new Indexer({
      chainId: network.chainId,
      client: network.client,
      db: deps.database.db,
      settlement: network.settlement,
      tokens: () => network.trackedTokens,
      pools: () => network.trackedPools.map((p) => p.address),
      factory: indexedFactory(network),
      ethFlows: network.ethFlows,
      blockFeed: network.reader.blockFeed,
      logger: log,
      ...(network.indexFrom !== undefined ? { startBlock: network.indexFrom } : {}),
    });
    indexers.set(network.name, indexer);
    if (deps.metrics) recordIndexerLag({ indexer, reader: network.reader, chain: network.name, metrics: deps.metrics, signal: deps.signal });
    const leaderLog = { info: (m: string) => log.info(m), warn: (o: object, m?: string) => log.warn(o, m) };
    running.push(
      runAsLeader({ url: deps.databaseUrl, name: `batchbook:loops:${network.chainId}`, logger: leaderLog, signal: deps.signal }, async (signal, lease) => {
        // real chains: the operator's allow-listed SOLVER_PRIVATE_KEY or none; the devnet: its own solver (synchronously, as before)
        const solverAccount = network.devnet || !deps.auctions.enabled ? undefined : await resolveSolverAccount(network, deps.solverPrivateKey ?? null, leaderLog);
        const auctionLoop = !deps.auctions.enabled || signal.aborted ? null : wireAuctionLoop({
          network,
          solverAccount,
          db: deps.database.db,
          nativePrices: deps.orderBooks.get(network.name)!.nativePrices,
          logger: deps.logger.child({ chain: network.name, loop: 'auction' }),
          signal,
          indexer,
          bannedAddresses: deps.bannedAddresses,
          deniedTokens: deps.deniedTokens,
          everyBlocks: deps.auctions.everyBlocks,
          orderPlaced: deps.orderBooks.get(network.name)?.onOrderPlaced,
          solvers: deps.solverEngines?.get(network.name)?.solvers,
          gate: deps.auctionGate,
          lease,
          fees: deps.fees,
        });
        if (auctionLoop) auctionLoops.set(network.name, auctionLoop);
        const notifications = deps.notifications;
        const producerLog = deps.logger.child({ chain: network.name, loop: 'notifications' });
        const producing = notifications
          ? producerFor(network, deps.database.db, notifications, { logger: producerLog, onDeliveries: notifications.onDeliveries })
              .run(signal, (wake) => indexer.onIndexed(() => wake()), notifications.pollIntervalMs)
              .catch((err) => producerLog.error({ err }, 'notification producer stopped with an error'))
          : null;
        if (auctionLoop && deps.metrics) recordAuctionCycles(auctionLoop, network.name, deps.metrics);
        // executed hooks (the trampoline's events), following the indexer's checkpoint
        const hooks = network.hooksTrampoline
          ? new HookIndexer({
            chainId: network.chainId, client: network.client, db: deps.database.db, trampoline: network.hooksTrampoline,
            // where the main indexer starts (a fork: its block + 1), not the chain's first block
            ...(network.indexFrom !== undefined ? { startBlock: network.indexFrom } : {}),
            logger: deps.logger.child({ chain: network.name, loop: 'hooks' }),
          })
          : null;
        const unsubscribeHooks = hooks ? indexer.onIndexed(() => hooks.wake()) : null;
        // eth-flow placements the indexer stored become orders (priced as API orders are)
        const orderBook = deps.orderBooks.get(network.name);
        const ethFlowIngest = orderBook && network.ethFlows.length > 0
          ? new EthFlowIngest({ chainId: network.chainId, db: deps.database.db, orders: orderBook.orders, quoter: orderBook.services.quotes, settlement: network.settlement, logger: deps.logger.child({ chain: network.name, loop: 'ethflow' }) })
          : null;
        const refunderLog = deps.logger.child({ chain: network.name, loop: 'ethflow-refunder' });
        const refunder = await ethFlowRefunderFor(network, deps.database.db, deps.ethflowRefunderKey ?? null, refunderLog).catch((err) => {
          refunderLog.warn({ err }, 'eth-flow refunder not started');
          return null;
        });
        const unsubscribeEthFlow = ethFlowIngest ? indexer.onIndexed((_from, _to, touched) => { if (touched.orderUids.length > 0) ethFlowIngest.wake(); }) : null;
        try {
          await Promise.all([
            track(`${network.name} notification producer`, producing),
            track(`${network.name} eth-flow ingest`, ethFlowIngest?.run(signal)),
            track(`${network.name} eth-flow refunder`, refunder?.run(signal)),
            track(`${network.name} pool history`, network.poolHistory
              ? indexPoolHistory({
                  client: network.client, db: deps.database.db, chainId: network.chainId, pools: network.trackedPools.map((p) => p.address),
                  ...network.poolHistory, logger: log, signal,
                }).catch((err) => {
                  if (!signal.aborted) log.warn({ err }, 'pool history before the fork block not indexed; slippage waits for new swaps');
                })
              : null),
            track(`${network.name} indexer`, indexer.run(signal).catch((err) => {
              if (!signal.aborted) log.error({ err }, 'indexer stopped with an error');
            })),
            track(`${network.name} hooks indexer`, hooks?.run(signal)),
            aborted(signal),
          ]);
        } finally {
          unsubscribeHooks?.();
          unsubscribeEthFlow?.();
          auctionLoops.delete(network.name);
          await track(`${network.name} auction loop`, auctionLoop?.stop());
        }
      }),
    );
  }
  // PGlite has no autovacuum: the node vacuums the tables it rewrites (db/vacuum.ts)
  if (deps.database.engine === 'pglite') running.push(track('vacuum', vacuumPeriodically(deps.database.db, deps.logger.child({ loop: 'vacuum' }), deps.signal))!);
  return {
    indexers,
    auctionLoops,
    async stop() {
      // a stop that takes long names the loops it still waits for
      const slow = setInterval(() => deps.logger.warn(`shutdown: still waiting for ${[...pending].join(', ') || 'the leadership locks'}`), 2_000);
      slow.unref();
      try {
        await Promise.allSettled(running);
      } finally {
        clearInterval(slow);
      }
    },
  };
}

/** Every minute, VACUUM of the tables the node rewrites (PGlite only). */
async function vacuumPeriodically(db: Kysely<DB>, logger: Logger, signal: AbortSignal, intervalMs = 60_000): Promise<void> {
  while (!signal.aborted) {
    await sleep(intervalMs, signal);
    if (signal.aborted) return;
    try {
      const took = await vacuumTables(db);
      logger.debug({ took }, 'vacuumed the rewritten tables');
    } catch (err) {
      if (!signal.aborted) logger.warn({ err }, 'vacuum failed; trying again in a minute');
    }
  }
}
