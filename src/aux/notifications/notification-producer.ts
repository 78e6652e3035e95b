/**
 * The notification producer of one chain: turns chain truth (indexed Trade and OrderInvalidated events) and the
 * order book's own facts (API cancellations, validTo, the auction's balance exclusions) into the six notification
 * types, only once the triggering block has `confirmations` confirmations, so a reorg never announces a fill that
 * did not happen. Each step is one transaction: the new notifications, their outbox rows and the checkpoint.
 *
 * No blind spot: block ranges follow the indexer's checkpoint; expiry is judged at the last confirmed block's
 * time (a fill after it is impossible for an expired order); API cancellations and balance exclusions are re-read
 * with an overlap and deduplicated by their deterministic ids. A reorg below the checkpoint steps it back.
 *
 * @example
 *   const producer = new NotificationProducer({ db, chain: { chainId, name }, reader, head, confirmations: 0, priceImprovementBps: 1 });
 *   await producer.step(); // or: void producer.run(signal, wake)
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { readCheckpoint } from '../../chain/indexer/checkpoint-store.js';
import type { TokenLabel } from './amount-text.js';
import { insertNotifications, storedIds } from './notification-store.js';
import type { ProducedNotification } from './notification-types.js';
import { cancelledNotification, expiredNotification, fillNotifications, insufficientBalanceNotification, type ChainLabel, type TokenLabels } from './order-notifications.js';
import { apiCancellations, expiredOrders, fillsInRange, insufficientEvents, onChainCancellations } from './producer-queries.js';

export interface ProducerLogger {
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface NotificationProducerOptions {
  db: Kysely<DB>;
  chain: ChainLabel;
  /** symbols and decimals of tokens (the chain reader, cached) */
  tokens: (tokens: Address[]) => Promise<Array<TokenLabel | null>>;
  /** the chain's head block number */
  head: () => Promise<number>;
  /** a block's hash and timestamp when the indexer no longer remembers it */
  block: (number: number) => Promise<{ hash: Hex; timestamp: number }>;
  confirmations: number;
  priceImprovementBps: number;
  /** the indexer checkpoint followed (default 'main') */
  indexerName?: string;
  /** blocks per step at most (default 5000) */
  maxBlocks?: number;
  logger?: ProducerLogger;
  /** called with the number of deliveries written after a step that wrote some */
  onDeliveries?: (count: number) => void;
}

interface ProducerCheckpoint {
  blockNumber: number;
  blockHash: Hex;
  blockTimestamp: number;
  orderEventId: number;
  cancellationsSince: Date;
}

export interface StepResult {
  /** last block looked at (null: the indexer has nothing yet) */
  toBlock: number | null;
  produced: number;
  deliveries: number;
  /** more confirmed blocks are waiting */
  behind: boolean;
}

/** re-read windows (dedup by id makes them cheap): API cancellations, expiries */
const CANCELLATION_OVERLAP_MS = 60_000;
const EXPIRY_OVERLAP_S = 600;
/** balance exclusions are final once this old (a writer's transaction has long committed) */
const EVENT_SETTLE_S = 60;
/** a rewind after a reorg below the checkpoint goes back this far */
const REORG_REWIND_BLOCKS = 64;

export class NotificationProducer {
  private readonly maxBlocks: number;

  constructor(private readonly options: NotificationProducerOptions) {
    this.maxBlocks = options.maxBlocks ?? 5000;
  }

  /** One pass: everything newly confirmed (up to `maxBlocks` blocks) plus API cancellations and balance exclusions. */
  async step(): Promise<StepResult> {
    const { db, chain } = this.options;
    const indexed = await readCheckpoint(db, chain.chainId, this.options.indexerName ?? 'main');
    if (!indexed) return { toBlock: null, produced: 0, deliveries: 0, behind: false };
    const safe = this.options.confirmations > 0 ? Math.min(indexed.number, (await this.options.head()) - this.options.confirmations) : indexed.number;
    const started = await this.dbNow();
    const checkpoint = await this.readOwnCheckpoint(safe, started);
    const from = await this.resumeFrom(checkpoint, indexed.number, safe);
    const to = Math.min(safe, from + this.maxBlocks - 1);
    const header = to >= from ? await this.header(to) : null;

    const fills = header ? await fillsInRange(db, chain.chainId, from, to) : [];
    const onChain = header ? await onChainCancellations(db, chain.chainId, from, to) : [];
    const expired = header ? await expiredOrders(db, chain.chainId, checkpoint.blockTimestamp - EXPIRY_OVERLAP_S, header.timestamp, to) : [];
    const api = await apiCancellations(db, chain.chainId, new Date(checkpoint.cancellationsSince.getTime() - CANCELLATION_OVERLAP_MS));
    const short = await insufficientEvents(db, chain.chainId, checkpoint.orderEventId);

    const tokens = new Set<Address>();
    for (const f of fills) tokens.add(f.order.sellToken).add(f.order.buyToken);
    for (const o of [...expired, ...short.map((s) => s.order), ...[...onChain, ...api].flatMap((c) => (c.order ? [c.order] : []))]) tokens.add(o.sellToken).add(o.buyToken);
    const labels = await this.labels([...tokens]);
    const threshold = this.options.priceImprovementBps;
    const produced: ProducedNotification[] = [
      ...fills.flatMap((f) => fillNotifications(f, chain, labels, threshold)),
      ...[...onChain, ...api].map((c) => cancelledNotification(c, chain, labels)),
      ...expired.map((o) => expiredNotification(o, chain, labels)),
      ...short.map((s) => insufficientBalanceNotification(s.order, s, chain, labels)),
    ];
    const known = await storedIds(db, produced.map((n) => n.id));
    const fresh = dedupe(produced.filter((n) => !known.has(n.id)));

    const settledEventId = await this.settledEventId(checkpoint.orderEventId);
    const result = await db.transaction().execute(async (trx) => {
      const written = await insertNotifications(trx, fresh);
      const next: ProducerCheckpoint = header
        ? { blockNumber: to, blockHash: header.hash, blockTimestamp: header.timestamp, orderEventId: settledEventId, cancellationsSince: started }
        : { ...checkpoint, orderEventId: settledEventId, cancellationsSince: started };
      await this.writeOwnCheckpoint(trx, next);
      return written;
    });
    if (result.deliveries > 0) this.options.onDeliveries?.(result.deliveries);
    return { toBlock: header ? to : checkpoint.blockNumber, produced: result.inserted.length, deliveries: result.deliveries, behind: to < safe };
  }

  /** Steps until caught up, then waits for `wake` (new indexed blocks) or `pollMs`; stops on abort. */
  async run(signal: AbortSignal, wake: (listener: () => void) => () => void, pollMs: number): Promise<void> {
    let waiting: (() => void) | null = null;
    const unsubscribe = wake(() => waiting?.());
    try {
      while (!signal.aborted) {
        let behind = false;
        try {
          behind = (await this.step()).behind;
        } catch (err) {
          if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message, chain: this.options.chain.name }, 'notification producer step failed; retrying');
        }
        if (behind || signal.aborted) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, pollMs);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          waiting = done;
          signal.addEventListener('abort', done, { once: true });
        });
        waiting = null;
      }
    } finally {
      unsubscribe();
    }
  }

  private async labels(tokens: Address[]): Promise<TokenLabels> {
    const map = new Map<string, TokenLabel | null>();
    if (tokens.length > 0) {
      const values = await this.options.tokens(tokens).catch(() => tokens.map(() => null));
      tokens.forEach((t, i) => map.set(t.toLowerCase(), values[i] ?? null));
    }
    return (token) => map.get(token.toLowerCase()) ?? null;
  }

  private async dbNow(): Promise<Date> {
    const { rows } = await sql<{ now: Date | string }>`select now() as now`.execute(this.options.db);
    return new Date(rows[0]!.now);
  }

  private async header(number: number): Promise<{ hash: Hex; timestamp: number }> {
    const row = await this.options.db
      .selectFrom('indexed_blocks')
      .select(['hash', 'timestamp'])
      .where('chain_id', '=', this.options.chain.chainId)
      .where('number', '=', number)
      .executeTakeFirst();
    return row ? { hash: toHex(row.hash), timestamp: Number(row.timestamp) } : this.options.block(number);
  }

  /**
   * The first block to look at: after the checkpoint, or earlier when a reorg replaced the checkpoint block. On the
   * first start, the first block holding a fill or an on-chain cancellation (else the last confirmed block): the
   * blocks before it hold nothing to announce, and a node that follows a long chain (a real chain indexed from its
   * head, a fork of mainnet) does not step through millions of empty blocks reading a header per 5 000.
   */
  private async resumeFrom(checkpoint: ProducerCheckpoint, indexedTo: number, safe: number): Promise<number> {
    if (checkpoint.blockNumber < 0) return this.firstEventBlock(Math.max(0, safe));
    const remembered = await this.options.db
      .selectFrom('indexed_blocks')
      .select('hash')
      .where('chain_id', '=', this.options.chain.chainId)
      .where('number', '=', checkpoint.blockNumber)
      .executeTakeFirst();
    const replaced = checkpoint.blockNumber > indexedTo || (remembered !== undefined && toHex(remembered.hash) !== checkpoint.blockHash);
    if (!replaced) return checkpoint.blockNumber + 1;
    this.options.logger?.warn({ chain: this.options.chain.name, block: checkpoint.blockNumber }, 'notifications: the checkpoint block was reorganised away; looking again');
    return Math.max(0, Math.min(checkpoint.blockNumber, indexedTo) - REORG_REWIND_BLOCKS);
  }

  /** The first indexed block with a fill or an on-chain cancellation of this chain, at most `safe` (each table's key starts with the block). */
  private async firstEventBlock(safe: number): Promise<number> {
    const chainId = this.options.chain.chainId;
    const { rows } = await sql<{ first: string | number | null }>`select least(
        (select min(block_number) from trades where chain_id = ${chainId}),
        (select min(block_number) from invalidations where chain_id = ${chainId}),
        (select min(block_number) from ethflow_invalidations where chain_id = ${chainId})) as first`.execute(this.options.db);
    const first = rows[0]?.first;
    return first === null || first === undefined ? safe : Math.min(Number(first), safe);
  }

  /** Balance exclusions up to here are final: the newest one older than a minute. */
  private async settledEventId(current: number): Promise<number> {
    const { rows } = await sql<{ id: number | string | null }>`
      select max(id) as id from order_events
      where chain_id = ${this.options.chain.chainId} and label = 'invalid' and reason in ('insufficient_balance', 'insufficient_allowance')
        and timestamp < now() - make_interval(secs => ${EVENT_SETTLE_S})`.execute(this.options.db);
    return Math.max(current, rows[0]?.id == null ? 0 : Number(rows[0].id));
  }

  private async readOwnCheckpoint(safe: number, now: Date): Promise<ProducerCheckpoint> {
    const row = await this.options.db.selectFrom('notification_checkpoints').selectAll().where('chain_id', '=', this.options.chain.chainId).executeTakeFirst();
    if (row) {
      return {
        blockNumber: Number(row.block_number),
        blockHash: toHex(row.block_hash),
        blockTimestamp: Number(row.block_timestamp),
        orderEventId: Number(row.order_event_id),
        cancellationsSince: new Date(row.cancellations_since),
      };
    }
    // first start: every indexed fill (history included), expiries and cancellations of the past week
    const header = safe >= 0 ? await this.header(safe) : { timestamp: Math.floor(now.getTime() / 1000) };
    const week = 7 * 24 * 3600;
    return { blockNumber: -1, blockHash: '0x', blockTimestamp: header.timestamp - week, orderEventId: 0, cancellationsSince: new Date(now.getTime() - week * 1000) };
  }

  private async writeOwnCheckpoint(trx: Kysely<DB>, c: ProducerCheckpoint): Promise<void> {
    const values = {
      block_number: c.blockNumber,
      block_hash: toBytes(c.blockHash),
      block_timestamp: c.blockTimestamp,
      order_event_id: c.orderEventId,
      cancellations_since: c.cancellationsSince,
      updated_at: new Date(),
    };
    await trx
      .insertInto('notification_checkpoints')
      .values({ chain_id: this.options.chain.chainId, ...values })
      .onConflict((oc) => oc.column('chain_id').doUpdateSet(values))
      .execute();
  }
}

function dedupe(list: ProducedNotification[]): ProducedNotification[] {
  const seen = new Set<string>();
  return list.filter((n) => (seen.has(n.id) ? false : (seen.add(n.id), true)));
}
