/**
 * Indexes the hooks our HooksTrampoline executed (its `HookExecuted` events) into `hook_executions`, one row per
 * hook, with what the order's app data says about it (app code, dApp id, bridging). It follows the main event
 * indexer's checkpoint: it reads the trampoline's logs only up to blocks the main indexer has checked, each range
 * in one transaction with its own checkpoint ('hooks'), so a restart resumes exactly where it stopped. When the
 * main checkpoint moves back, or the block under our checkpoint changed (a reorg), the rows above the point
 * where the chains still agree are deleted and indexed again.
 *
 * @example
 *   const hooks = new HookIndexer({ chainId, client, db, trampoline, logger });
 *   indexer.onIndexed(() => hooks.wake());
 *   void hooks.run(signal);
 */
import type { Kysely } from 'kysely';
import { decodeEventLog, encodeEventTopics, type Address, type Hex } from 'viem';
import type { ChainClient } from '../../chain/client.js';
import { fetchBlockHeaders } from '../../chain/indexer/block-headers.js';
import { readCheckpoint, writeCheckpoint, type Checkpoint } from '../../chain/indexer/checkpoint-store.js';
import { fetchLogs } from '../../chain/indexer/fetch-logs.js';
import { toBytes, toHex, toNumeric } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { HOOKS_TRAMPOLINE_ABI } from '../../protocol/index.js';
import { hookDetails } from './hook-details.js';

export interface HookIndexerLogger {
  warn(obj: object, msg?: string): void;
}

export interface HookIndexerOptions {
  chainId: number;
  client: ChainClient;
  db: Kysely<DB>;
  trampoline: Address;
  logger?: HookIndexerLogger;
  /** the main indexer's checkpoint name (default 'main') */
  follow?: string;
  /**
   * the first block to read when there is no checkpoint yet (default 0): where the main indexer starts (a fork's
   * block + 1: the hooks the real chain ran before the fork are not read from the upstream node, range by range)
   */
  startBlock?: number;
  /** blocks per eth_getLogs (default 2000) */
  blockRange?: number;
  /** how far back to re-index when the block under the checkpoint changed (default 256, the main reorg window) */
  reorgWindow?: number;
  /** wait between passes when not woken (default 1000 ms) */
  pollMs?: number;
}

const NAME = 'hooks';
const TOPIC = encodeEventTopics({ abi: HOOKS_TRAMPOLINE_ABI, eventName: 'HookExecuted' })[0] as Hex;

export class HookIndexer {
  private wakeUp: (() => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: HookIndexerOptions) {}

  /** Runs a pass soon (e.g. after the main indexer committed a range). */
  wake(): void {
    this.wakeUp?.();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.indexToMain(signal);
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err, chainId: this.options.chainId }, 'hooks indexer: pass failed; retrying');
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wakeUp = null;
          resolve();
        };
        const timer = setTimeout(done, this.options.pollMs ?? 1000);
        signal.addEventListener('abort', done, { once: true });
        this.wakeUp = done;
      });
    }
  }

  /**
   * Indexes up to the main indexer's checkpoint; returns the block reached (null before the main indexer started).
   * An aborted `signal` ends the pass after the range in hand (each range is stored with its checkpoint).
   */
  indexToMain(signal?: AbortSignal): Promise<number | null> {
    const next = this.queue.then(() => this.pass(signal));
    this.queue = next.catch(() => {});
    return next;
  }

  private async pass(signal?: AbortSignal): Promise<number | null> {
    const { db, chainId } = this.options;
    const main = await readCheckpoint(db, chainId, this.options.follow ?? 'main');
    if (!main) return null;
    let ours = await readCheckpoint(db, chainId, NAME);
    if (ours) ours = await this.agreeing(ours, main);
    let from = ours ? ours.number + 1 : Math.max(0, this.options.startBlock ?? 0);
    let reached = ours?.number ?? null;
    const range = this.options.blockRange ?? 2000;
    while (from <= main.number) {
      if (signal?.aborted) return reached;
      const to = Math.min(main.number, from + range - 1);
      await this.indexRange(from, to, to === main.number ? main : null);
      reached = to;
      from = to + 1;
    }
    return main.number;
  }

  /** Our checkpoint, moved back (and the rows above it deleted) when the main one is lower or its block changed. */
  private async agreeing(ours: Checkpoint, main: Checkpoint): Promise<Checkpoint | null> {
    const { db, chainId } = this.options;
    let keep: number | null = null;
    if (main.number < ours.number) keep = main.number;
    else {
      const remembered = await db.selectFrom('indexed_blocks').select('hash').where('chain_id', '=', chainId).where('number', '=', ours.number).executeTakeFirst();
      const hash = remembered ? toHex(remembered.hash) : (await fetchBlockHeaders(this.options.client, [ours.number])).get(ours.number)?.hash;
      if (hash !== undefined && hash !== ours.hash) keep = ours.number - (this.options.reorgWindow ?? 256);
    }
    if (keep === null) return ours;
    await db.deleteFrom('hook_executions').where('chain_id', '=', chainId).where('block_number', '>', keep).execute();
    if (keep < 0) {
      await db.deleteFrom('indexer_checkpoints').where('chain_id', '=', chainId).where('name', '=', NAME).execute();
      return null;
    }
    const header = (await fetchBlockHeaders(this.options.client, [keep])).get(keep);
    if (!header) throw new Error(`hooks indexer: block ${keep} not found`);
    const moved = { number: keep, hash: header.hash };
    await writeCheckpoint(db, chainId, NAME, moved);
    return moved;
  }

  private async indexRange(from: number, to: number, end: Checkpoint | null): Promise<void> {
    const { db, chainId, client, trampoline } = this.options;
    const logs = await fetchLogs(client, { addresses: [trampoline], topics: [TOPIC], fromBlock: from, toBlock: to });
    const blocks = [...new Set([...logs.map((l) => l.blockNumber), to])];
    const headers = await fetchBlockHeaders(client, blocks);
    const last = end ?? (headers.get(to) ? { number: to, hash: headers.get(to)!.hash } : null);
    if (!last) throw new Error(`hooks indexer: block ${to} not found`);
    if (end && headers.get(to)?.hash !== end.hash) throw new Error(`hooks indexer: block ${to} changed under the main checkpoint`);
    for (const log of logs) {
      if (headers.get(log.blockNumber)?.hash !== log.blockHash) throw new Error(`hooks indexer: block ${log.blockNumber} changed while reading`);
    }
    const decoded = logs.map((log) => ({ log, event: decodeEventLog({ abi: HOOKS_TRAMPOLINE_ABI, eventName: 'HookExecuted', topics: log.topics as [Hex, ...Hex[]], data: log.data }).args }));
    const details = await hookDetails(db, chainId, decoded.map(({ event }) => ({ orderUid: event.orderUid, hookType: event.hookType === 0 ? 'pre' : 'post', index: Number(event.index) })));
    const rows = decoded.map(({ log, event }, i) => ({
      chain_id: chainId,
      block_number: log.blockNumber,
      log_index: log.logIndex,
      block_time: new Date(headers.get(log.blockNumber)!.timestamp * 1000),
      tx_hash: toBytes(log.transactionHash),
      order_uid: toBytes(event.orderUid),
      hook_type: event.hookType === 0 ? ('pre' as const) : ('post' as const),
      hook_index: Number(event.index),
      target: toBytes(event.target),
      gas_limit: toNumeric(event.gasLimit),
      success: event.success,
      app_hash: details[i]!.appHash ? toBytes(details[i]!.appHash!) : null,
      app_code: details[i]!.appCode,
      app_id: details[i]!.appId,
      is_bridging: details[i]!.isBridging,
      destination_chain_id: details[i]!.destinationChainId,
      destination_token_address: details[i]!.destinationTokenAddress,
    }));
    await db.transaction().execute(async (tx) => {
      if (rows.length > 0) await tx.insertInto('hook_executions').values(rows).onConflict((oc) => oc.columns(['chain_id', 'block_number', 'log_index']).doNothing()).execute();
      await writeCheckpoint(tx, chainId, NAME, last);
    });
  }
}
