/**
 * Background loops of a running node, per network: the event indexer (chain → database) and what hangs off
 * it. Each loop takes the shared AbortSignal and stops cleanly.
 */
import type { Logger } from 'pino';
import type { Database } from './db/connection.js';
import type { ChainNetwork } from './chain/network.js';
import type { OrderBookBuild } from './orderbook/build-services.js';

export interface LoopDeps {
  networks: ChainNetwork[];
  database: Database;
  orderBooks: Map<string, OrderBookBuild>;
  logger: Logger;
  signal: AbortSignal;
  onFatal: (reason: string) => void;
}

export interface RunningLoops {
  stop(): Promise<void>;
}

export function startBackgroundLoops(deps: LoopDeps): RunningLoops {
  const running: Promise<unknown>[] = [];
  void deps;
  return {
    async stop() {
      await Promise.allSettled(running);
    },
  };
}
