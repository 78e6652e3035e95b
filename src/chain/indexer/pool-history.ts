/**
 * A one-off read of some Uniswap-V2 pools' recent past: their Sync and Swap events over a window of blocks that
 * ends at `toBlock`, stored like the indexer's own (amm_syncs, amm_swaps; rows already there are skipped). Fork mode
 * uses it on a fresh fork so that slippage and volatility have the chain's recent history from the first minute,
 * although the indexer itself starts after the fork block.
 *
 * Bounded: the window is `windowSeconds` of chain time before `toBlock`, found from the average block time of the
 * last `SAMPLE_BLOCKS` blocks, and never more than `maxBlocks` blocks; logs are read in ranges of at most
 * `blockRange` blocks, halved while the node refuses a range (LogRangeTooLargeError), one database transaction per
 * range. Only reads reach the node.
 *
 * @example
 *   await indexPoolHistory({ client, db, chainId: 1, pools, toBlock: forkBlock, windowSeconds: 6 * 3600, logger });
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { DB } from '../../db/schema.js';
import type { ChainClient } from '../client.js';
import { fetchBlockHeaders } from './block-headers.js';
import { LogRangeTooLargeError } from './fetch-logs.js';
import { fetchRange } from './fetch-range.js';
import { storeEvents } from './store-events.js';

/** blocks before `toBlock` whose timestamps give the average block time */
const SAMPLE_BLOCKS = 1_000;

export interface PoolHistoryOptions {
  client: ChainClient;
  db: Kysely<DB>;
  chainId: number;
  pools: readonly Address[];
  /** the last block read (the fork block) */
  toBlock: number;
  /** chain time covered before `toBlock` */
  windowSeconds: number;
  /** blocks read at most, whatever the block time (default 100 000) */
  maxBlocks?: number;
  /** blocks per eth_getLogs at most (default 2000, as the indexer) */
  blockRange?: number;
  logger: { info(obj: object, msg?: string): void };
  signal?: AbortSignal;
}

export interface PoolHistoryResult {
  fromBlock: number;
  toBlock: number;
  syncs: number;
  swaps: number;
}

/** The first block of the window: `windowSeconds` before `toBlock` at the recent average block time. */
export async function historyStart(client: ChainClient, toBlock: number, windowSeconds: number, maxBlocks: number): Promise<number> {
  const sampleFrom = Math.max(0, toBlock - SAMPLE_BLOCKS);
  if (sampleFrom === toBlock) return toBlock;
  const headers = await fetchBlockHeaders(client, [sampleFrom, toBlock]);
  const first = headers.get(sampleFrom);
  const last = headers.get(toBlock);
  if (!first || !last) throw new Error(`pool history: blocks ${sampleFrom} and ${toBlock} are not both on the chain`);
  const secondsPerBlock = Math.max(0.1, (last.timestamp - first.timestamp) / (toBlock - sampleFrom));
  const blocks = Math.min(maxBlocks, Math.ceil(windowSeconds / secondsPerBlock));
  return Math.max(0, toBlock - blocks + 1);
}

export async function indexPoolHistory(options: PoolHistoryOptions): Promise<PoolHistoryResult> {
  const { client, db, chainId, toBlock } = options;
  const started = performance.now();
  const pools = [...new Set(options.pools.map((p) => p.toLowerCase() as Address))];
  const fromBlock = await historyStart(client, toBlock, options.windowSeconds, Math.max(1, options.maxBlocks ?? 100_000));
  const result: PoolHistoryResult = { fromBlock, toBlock, syncs: 0, swaps: 0 };
  if (pools.length === 0) return result;
  const roles = { settlement: '', tokens: new Set<string>(), pools: new Set<string>(pools), factories: new Set<string>() };
  let range = Math.max(1, options.blockRange ?? 2_000);
  let cursor = fromBlock;
  while (cursor <= toBlock) {
    if (options.signal?.aborted) break;
    const to = Math.min(toBlock, cursor + range - 1);
    let fetched;
    try {
      // reorgWindow 0: no headers beyond the blocks with events (the window is below the fork block: final)
      fetched = await fetchRange(client, { fromBlock: cursor, toBlock: to, head: toBlock, reorgWindow: 0, parent: null, roles });
    } catch (error) {
      if (!(error instanceof LogRangeTooLargeError) || to === cursor) throw error;
      range = Math.max(1, Math.floor((to - cursor + 1) / 2));
      continue;
    }
    const timestamps = new Map([...fetched.headers].map(([n, h]) => [n, h.timestamp]));
    const events = fetched.events;
    await db.transaction().execute((trx) => storeEvents(trx, chainId, events, timestamps));
    result.syncs += events.syncs.length;
    result.swaps += events.swaps.length;
    cursor = to + 1;
  }
  options.logger.info({ chainId, pools: pools.length, ...result, ms: Math.round(performance.now() - started) }, 'pool history: indexed the pools\' past events');
  return result;
}
