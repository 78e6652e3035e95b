/**
 * Background loops of a running node, per network: the event indexer (chain → database), the auction loop
 * (auction → solvers → driver → lifecycle events) that hangs off it. With a shared PostgreSQL they run on
 * one replica per chain (advisory-lock leadership); each takes the AbortSignal and stops cleanly.
 */
import type { Logger } from 'pino';
import type { Database } from './db/connection.js';
import type { ChainNetwork } from './chain/network.js';
import type { OrderBookBuild } from './orderbook/build-services.js';
import { Indexer } from './chain/indexer/indexer.js';
import { runAsLeader } from './db/leadership.js';
import { startAuctionLoop, type RunningAuctionLoop } from './auction/auction-loop.js';
import { producerFor, type ProducerSettings } from './aux/notifications/index.js';
import type { Metrics } from './metrics/metrics.js';
import { recordAuctionCycles, recordIndexerLag } from './metrics/loop-metrics.js';
import { HookIndexer } from './aux/hooks/index.js';
import type { SolverEngines } from './solver-api/index.js';

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
  /** the competing solver engines of each network, by network name (default: the built-ins) */
  solverEngines?: Map<string, SolverEngines>;
  /** the notification producer of each chain (with its other loops); onDeliveries wakes this replica's dispatcher */
  notifications?: ProducerSettings & { pollIntervalMs: number; onDeliveries: (count: number) => void };
  metrics?: Metrics;
}

export interface RunningLoops {
  indexers: Map<string, Indexer>;
  /** the auction loop of each network, while this replica leads it */
  auctionLoops: Map<string, RunningAuctionLoop>;
  stop(): Promise<void>;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

export function startBackgroundLoops(deps: LoopDeps): RunningLoops {
  const running: Promise<unknown>[] = [];
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
      // only the devnet's own factory: following a mainnet-sized factory would index every pair there is
      factory: network.devnet ? (network.amm?.factory ?? null) : null,
      blockFeed: network.reader.blockFeed,
      logger: log,
    });
    indexers.set(network.name, indexer);
    if (deps.metrics) recordIndexerLag({ indexer, reader: network.reader, chain: network.name, metrics: deps.metrics, signal: deps.signal });
    const leaderLog = { info: (m: string) => log.info(m), warn: (o: object, m?: string) => log.warn(o, m) };
    running.push(
      runAsLeader({ url: deps.databaseUrl, name: `batchbook:loops:${network.chainId}`, logger: leaderLog, signal: deps.signal }, async (signal) => {
        const auctionLoop = !deps.auctions.enabled ? null : startAuctionLoop({
          network,
          db: deps.database.db,
          nativePrices: deps.orderBooks.get(network.name)!.nativePrices,
          logger: deps.logger.child({ chain: network.name, loop: 'auction' }),
          signal,
          indexer,
          bannedAddresses: deps.bannedAddresses,
          deniedTokens: deps.deniedTokens,
          everyBlocks: deps.auctions.everyBlocks,
          solvers: deps.solverEngines?.get(network.name)?.solvers,
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
          ? new HookIndexer({ chainId: network.chainId, client: network.client, db: deps.database.db, trampoline: network.hooksTrampoline, logger: deps.logger.child({ chain: network.name, loop: 'hooks' }) })
          : null;
        const unsubscribeHooks = hooks ? indexer.onIndexed(() => hooks.wake()) : null;
        try {
          await Promise.all([
            producing,
            indexer.run(signal).catch((err) => {
              if (!signal.aborted) log.error({ err }, 'indexer stopped with an error');
            }),
            hooks?.run(signal),
            aborted(signal),
          ]);
        } finally {
          unsubscribeHooks?.();
          auctionLoops.delete(network.name);
          await auctionLoop?.stop();
        }
      }),
    );
  }
  return {
    indexers,
    auctionLoops,
    async stop() {
      await Promise.allSettled(running);
    },
  };
}
