/**
 * The affiliate program's background step, run every couple of seconds (one replica at a time):
 * 1. binds traders: orders (oldest first, from a stored cursor) whose app data carries `metadata.referrer.code`
 *    of a known, enabled code that is not the trader's own bind their owner; the first binding wins (primary
 *    key) and is permanent. Orders younger than a few seconds wait for the next pass, so an order committed
 *    late with an older `created_at` is never skipped.
 * 2. values trades: every indexed trade without a USD value gets one, fixed once (executed sell amount × the sell
 *    token's USD price from the market services, read when the trade is first seen, i.e. within a pass of its
 *    block); a token without a price is stored as 0 (`priced = false`); a transient failure retries next pass.
 * 3. records, per chain, the newest indexed block whose trades are all valued (`lastUpdatedAt`).
 */
import { sql, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { referrerCodeOf } from './affiliate-code.js';

export interface AffiliateSyncChain {
  chainId: number;
  /** USD value of `atoms` of `token`; null when the token has no price; rejects on transient failures */
  usdValue(token: Address, atoms: bigint): Promise<number | null>;
}

export interface AffiliateSyncOptions {
  db: Kysely<DB>;
  chains: AffiliateSyncChain[];
  /** name of the indexer checkpoint whose block the trades are complete up to (default 'main') */
  checkpointName?: string;
  /** rows per query (default 500) */
  batchSize?: number;
  /** orders younger than this wait for the next pass (default 3 s) */
  settleMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
}

const ORDER_CURSOR = 'orders';

export class AffiliateSync {
  private readonly batch: number;
  constructor(private readonly options: AffiliateSyncOptions) {
    this.batch = options.batchSize ?? 500;
  }

  /** One pass; returns how many bindings and trade values were written. */
  async runOnce(): Promise<{ bound: number; valued: number }> {
    const bound = await this.bindTraders();
    let valued = 0;
    for (const chain of this.options.chains) valued += await this.valueTrades(chain);
    return { bound, valued };
  }

  /** Runs passes every `intervalMs` until the signal aborts; a failed pass is logged and retried. */
  async run(signal: AbortSignal, intervalMs = 2_000): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.runOnce();
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message }, 'affiliate sync pass failed');
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, intervalMs);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private async bindTraders(): Promise<number> {
    const { db } = this.options;
    let bound = 0;
    for (;;) {
      const cursor = await db.selectFrom('affiliate_progress').select('position').where('name', '=', ORDER_CURSOR).executeTakeFirst();
      const since = cursor?.position ? new Date(cursor.position) : new Date(0);
      const settleMs = this.options.settleMs ?? 3_000;
      const orders = await sql<{ chain_id: number; uid: Uint8Array; owner: Uint8Array; created_at: Date | string; full_app_data: Uint8Array | null }>`
        select o.chain_id, o.uid, o.owner, o.created_at, a.full_app_data
        from orders o left join app_data a on a.contract_app_data = o.app_data
        where o.created_at > ${since} and o.created_at < now() - make_interval(secs => ${settleMs / 1000}::double precision)
        order by o.created_at limit ${this.batch}`.execute(db);
      const rows = orders.rows;
      if (rows.length === 0) return bound;
      // a page ending inside a run of equal timestamps would skip the rest: stop before the last timestamp
      const lastAt = new Date(rows[rows.length - 1]!.created_at).getTime();
      const page = rows.length === this.batch ? rows.filter((r) => new Date(r.created_at).getTime() < lastAt) : rows;
      const usable = page.length > 0 ? page : rows; // a whole page of one timestamp: take it
      for (const order of usable) {
        const code = order.full_app_data ? referrerCodeOf(Buffer.from(order.full_app_data).toString('utf8')) : null;
        if (code) bound += await this.bind(order.owner, code, order.chain_id, order.uid, new Date(order.created_at));
      }
      const position = new Date(usable[usable.length - 1]!.created_at);
      await db
        .insertInto('affiliate_progress')
        .values({ name: ORDER_CURSOR, position })
        .onConflict((oc) => oc.column('name').doUpdateSet({ position, updated_at: new Date() }))
        .execute();
      if (rows.length < this.batch) return bound;
    }
  }

  private async bind(owner: Uint8Array, code: string, chainId: number, uid: Uint8Array, createdAt: Date): Promise<number> {
    const result = await sql`
      insert into affiliate_bindings (trader, code, chain_id, order_uid, linked_since)
      select ${owner}, c.code, ${chainId}, ${uid}, ${createdAt}
      from affiliate_codes c
      where c.code = ${code} and c.enabled and c.wallet <> ${owner} and c.created_at <= ${createdAt}
      on conflict (trader) do nothing`.execute(this.options.db);
    return Number(result.numAffectedRows ?? 0n);
  }

  private async valueTrades(chain: AffiliateSyncChain): Promise<number> {
    const { db } = this.options;
    const checkpoint = await db
      .selectFrom('indexer_checkpoints')
      .select('block_number')
      .where('chain_id', '=', chain.chainId)
      .where('name', '=', this.options.checkpointName ?? 'main')
      .executeTakeFirst();
    if (!checkpoint) return 0;
    const covered = Number(checkpoint.block_number);
    let valued = 0;
    for (;;) {
      const trades = await sql<{ block_number: number | string; log_index: number | string; owner: Uint8Array; sell_token: Uint8Array; sell_amount: string; block_timestamp: Date | string | null; order_created_at: Date | string | null }>`
        select t.block_number, t.log_index,
          -- the trader of an eth-flow order is whoever placed it (the trade's owner is the contract)
          coalesce((select ef.sender from ethflow_placements ef where ef.chain_id = t.chain_id and ef.order_uid = t.order_uid limit 1), t.owner) as owner,
          t.sell_token, t.sell_amount::text as sell_amount, t.block_timestamp, o.created_at as order_created_at
        from trades t
        left join affiliate_trade_volumes v on v.chain_id = t.chain_id and v.block_number = t.block_number and v.log_index = t.log_index
        left join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid
        where t.chain_id = ${chain.chainId} and t.block_number <= ${covered} and v.chain_id is null
        order by t.block_number, t.log_index limit ${this.batch}`.execute(db);
      for (const trade of trades.rows) {
        const value = await chain.usdValue(toHex(trade.sell_token) as Address, BigInt(trade.sell_amount));
        await db
          .insertInto('affiliate_trade_volumes')
          .values({
            chain_id: chain.chainId,
            block_number: Number(trade.block_number),
            log_index: Number(trade.log_index),
            trader: trade.owner,
            block_timestamp: trade.block_timestamp ? new Date(trade.block_timestamp) : new Date(),
            order_created_at: trade.order_created_at ? new Date(trade.order_created_at) : null,
            usd_volume: value ?? 0,
            priced: value !== null,
          })
          .onConflict((oc) => oc.doNothing())
          .execute();
        valued++;
      }
      if (trades.rows.length < this.batch) break;
    }
    await this.recordCovered(chain.chainId, covered);
    return valued;
  }

  private async recordCovered(chainId: number, block: number): Promise<void> {
    const { db } = this.options;
    const header = await db.selectFrom('indexed_blocks').select(['number', 'timestamp']).where('chain_id', '=', chainId).where('number', '<=', block).orderBy('number', 'desc').limit(1).executeTakeFirst();
    const blockTimestamp = header ? new Date(Number(header.timestamp) * 1000) : null;
    if (!blockTimestamp) return;
    const name = `chain:${chainId}`;
    await db
      .insertInto('affiliate_progress')
      .values({ name, block_number: block, block_timestamp: blockTimestamp })
      .onConflict((oc) => oc.column('name').doUpdateSet({ block_number: block, block_timestamp: blockTimestamp, updated_at: new Date() }))
      .execute();
  }
}
