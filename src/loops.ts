/**
 * Background loops of a running node, per network: the event indexer (chain → database) and what hangs off
 * it. Each loop takes the shared AbortSignal and stops cleanly.
 */
import type { Logger } from 'pino';
import type { Database } from './db/connection.js';
import type { ChainNetwork } from './chain/network.js';
import type { OrderBookBuild } from './orderbook/build-services.js';
import { Indexer } from './chain/indexer/indexer.js';
import { runAsLeader } from './db/leadership.js';

export interface LoopDeps {
  networks: ChainNetwork[];
  database: Database;
  orderBooks: Map<string, OrderBookBuild>;
  logger: Logger;
  signal: AbortSignal;
  onFatal: (reason: string) => void;
  /** PostgreSQL URL when replicas share a database: the loops of a chain then run on one replica only */
  databaseUrl: string | null;
}

export interface RunningLoops {
  indexers: Map<string, Indexer>;
  stop(): Promise<void>;
}

export function startBackgroundLoops(deps: LoopDeps): RunningLoops {
  const running: Promise<unknown>[] = [];
  const indexers = new Map<string, Indexer>();
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
    const leaderLog = { info: (m: string) => log.info(m), warn: (o: object, m?: string) => log.warn(o, m) };
    running.push(
      runAsLeader({ url: deps.databaseUrl, name: `batchbook:loops:${network.chainId}`, logger: leaderLog, signal: deps.signal }, async (signal) => {
        await indexer.run(signal).catch((err) => {
          if (!signal.aborted) log.error({ err }, 'indexer stopped with an error');
        });
      }),
    );
  }
  return {
    indexers,
    async stop() {
      await Promise.allSettled(running);
    },
  };
}
