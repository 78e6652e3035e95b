/**
 * The affiliate program's background step, run every couple of seconds (one replica at a time):
 * 1. binds traders: the first **traded** order (per chain, following the indexer) whose app data carries
 *    `metadata.referrer.code` of a known, enabled code that is not the trader's own binds its owner; the first
 *    binding wins (primary key) and is permanent. Only a trade proves the owner authorised the order (see
 *    `bindTraders`): an order posted in someone else's name (presign needs no signature) binds nobody.
 * 2. values trades: every indexed trade without a USD value gets one, fixed once (executed sell amount × the sell
 *    token's USD price from the market services, read when the trade is first seen, i.e. within a pass of its
 *    block); a token without a price is stored as 0 (`priced = false`); a failure retries that trade next pass
 *    without holding up the chain's other trades.
 * 3. records, per chain, the newest indexed block whose trades are all valued (`lastUpdatedAt`).
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { referrerCodeOf } from './affiliate-code.js';

export interface AffiliateSyncChain {
  chainId: number;
  /** USD value of `atoms` of `token` sold in a trade of that block; null when the token has no price; rejects on transient failures */
  usdValue(token: Address, atoms: bigint, trade: { blockNumber: number; txHash: Hex | null }): Promise<number | null>;
}

export interface AffiliateSyncOptions {
  db: Kysely<DB>;
  chains: AffiliateSyncChain[];
  /** name of the indexer checkpoint whose block the trades are complete up to (default 'main') */
  checkpointName?: string;
  /** rows per query (default 500) */
  batchSize?: number;
  /** how long a trade's price may keep failing before it is stored unpriced (default 10 min) */
  giveUpMs?: number;
  /** blocks of trades read per binding query (default 1,000) */
  blocksPerQuery?: number;
  logger?: { warn(obj: object, msg?: string): void };
}

/** per chain: the last block whose trades were looked at for bindings */
const BINDING_CURSOR = 'bindings:';

export class AffiliateSync {
  private readonly batch: number;
  private readonly blocksPerPass: number;
  /** trades whose price failed: since when (ms) */
  private readonly failingSince = new Map<string, number>();
  constructor(private readonly options: AffiliateSyncOptions) {
    this.batch = options.batchSize ?? 500;
    this.blocksPerPass = options.blocksPerQuery ?? 1_000;
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

  /**
   * Binds traders by their **traded** referred orders, per chain, following the indexer: trades in blocks after
   * the chain's binding cursor and up to the indexer's checkpoint (written in the same transaction as the trades,
   * so none can commit behind the cursor), oldest first. A trade proves its owner authorised the order on chain —
   * the settlement contract verified its eip712/ethsign/eip1271 signature, or found the owner's own
   * `setPreSignature(uid, true)` — so a presign order anyone may post in a victim's name binds nobody unless the
   * victim presigns it. A reorg that moves the checkpoint below the cursor moves the cursor back with it.
   */
  private async bindTraders(): Promise<number> {
    let bound = 0;
    for (const chain of this.options.chains) bound += await this.bindTradersOf(chain.chainId);
    return bound;
  }

  private async bindTradersOf(chainId: number): Promise<number> {
    const { db } = this.options;
    const covered = await this.checkpointOf(chainId);
    if (covered === null) return 0;
    const name = `${BINDING_CURSOR}${chainId}`;
    const cursorRow = await db.selectFrom('affiliate_progress').select('block_number').where('name', '=', name).executeTakeFirst();
    let cursor = Math.min(cursorRow?.block_number === null || cursorRow?.block_number === undefined ? -1 : Number(cursorRow.block_number), covered);
    let bound = 0;
    while (cursor < covered) {
      // jump over blocks without trades (a chain indexed from a late start block, quiet stretches)
      const next = await db.selectFrom('trades').select((eb) => eb.fn.min('block_number').as('block')).where('chain_id', '=', chainId).where('block_number', '>', cursor).where('block_number', '<=', covered).executeTakeFirst();
      if (next?.block === null || next?.block === undefined) {
        cursor = covered;
        await this.saveCursor(name, cursor);
        break;
      }
      const from = Number(next.block) - 1;
      const upTo = Math.min(covered, from + this.blocksPerPass);
      // every trade of the range: a block holds at most what its gas allows, so the range bounds the rows
      const trades = await sql<{ uid: Uint8Array; owner: Uint8Array; created_at: Date | string; full_app_data: Uint8Array }>`
        select x.uid, x.owner, x.created_at, x.full_app_data from (
          -- the trader of an eth-flow order is whoever placed it (the order's owner is the contract)
          select o.uid, coalesce((select ef.sender from ethflow_placements ef where ef.chain_id = o.chain_id and ef.order_uid = o.uid limit 1), o.owner) as owner,
            o.created_at, a.full_app_data, t.block_number, t.log_index
          from trades t
          join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid
          join app_data a on a.contract_app_data = o.app_data
          where t.chain_id = ${chainId} and t.block_number > ${from} and t.block_number <= ${upTo}
        ) x
        where not exists (select 1 from affiliate_bindings b where b.trader = x.owner)
        order by x.block_number, x.log_index`.execute(db);
      for (const order of trades.rows) {
        const code = referrerCodeOf(Buffer.from(order.full_app_data).toString('utf8'));
        if (code) bound += await this.bind(order.owner, code, chainId, order.uid, new Date(order.created_at));
      }
      cursor = upTo;
      await this.saveCursor(name, cursor);
    }
    if (cursorRow && Number(cursorRow.block_number) > covered) {
      await db.updateTable('affiliate_progress').set({ block_number: covered, updated_at: new Date() }).where('name', '=', name).execute();
    }
    return bound;
  }

  private async saveCursor(name: string, block: number): Promise<void> {
    await this.options.db
      .insertInto('affiliate_progress')
      .values({ name, block_number: block })
      .onConflict((oc) => oc.column('name').doUpdateSet({ block_number: block, updated_at: new Date() }))
      .execute();
  }

  private async checkpointOf(chainId: number): Promise<number | null> {
    const checkpoint = await this.options.db
      .selectFrom('indexer_checkpoints')
      .select('block_number')
      .where('chain_id', '=', chainId)
      .where('name', '=', this.options.checkpointName ?? 'main')
      .executeTakeFirst();
    return checkpoint ? Number(checkpoint.block_number) : null;
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

  /**
   * Values the chain's unvalued trades up to the indexer's checkpoint. A price that fails (the provider is down, or
   * cannot price that one token) leaves that trade for the next pass without holding up the others; a trade whose
   * price keeps failing for `giveUpMs` is stored unpriced (0, `priced = false`). Coverage (`lastUpdatedAt`) stops
   * before the first trade still waiting.
   */
  private async valueTrades(chain: AffiliateSyncChain): Promise<number> {
    const { db } = this.options;
    const covered = await this.checkpointOf(chain.chainId);
    if (covered === null) return 0;
    let valued = 0;
    let firstWaiting: number | null = null;
    let after = { block: -1, log: -1 };
    for (;;) {
      const trades = await sql<{ block_number: number | string; log_index: number | string; owner: Uint8Array; sell_token: Uint8Array; sell_amount: string; tx_hash: Uint8Array | null; block_timestamp: Date | string | null; order_created_at: Date | string | null }>`
        select t.block_number, t.log_index,
          -- the trader of an eth-flow order is whoever placed it (the trade's owner is the contract)
          coalesce((select ef.sender from ethflow_placements ef where ef.chain_id = t.chain_id and ef.order_uid = t.order_uid limit 1), t.owner) as owner,
          t.sell_token, t.sell_amount::text as sell_amount, t.tx_hash, t.block_timestamp, o.created_at as order_created_at
        from trades t
        left join affiliate_trade_volumes v on v.chain_id = t.chain_id and v.block_number = t.block_number and v.log_index = t.log_index
        left join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid
        where t.chain_id = ${chain.chainId} and t.block_number <= ${covered} and v.chain_id is null
          and (t.block_number > ${after.block} or (t.block_number = ${after.block} and t.log_index > ${after.log}))
        order by t.block_number, t.log_index limit ${this.batch}`.execute(db);
      for (const trade of trades.rows) {
        const block = Number(trade.block_number);
        const key = `${chain.chainId}:${block}:${trade.log_index}`;
        let value: number | null;
        try {
          value = await chain.usdValue(toHex(trade.sell_token) as Address, BigInt(trade.sell_amount), { blockNumber: block, txHash: trade.tx_hash ? (toHex(trade.tx_hash) as Hex) : null });
          this.failingSince.delete(key);
        } catch (err) {
          const since = this.failingSince.get(key) ?? Date.now();
          if (Date.now() - since < (this.options.giveUpMs ?? 10 * 60_000)) {
            if (!this.failingSince.has(key)) this.options.logger?.warn({ err: (err as Error).message, token: toHex(trade.sell_token), block }, 'affiliate: trade not valued yet (price failed)');
            this.failingSince.set(key, since);
            firstWaiting ??= block;
            continue;
          }
          this.failingSince.delete(key);
          value = null; // given up: stored unpriced
        }
        await db
          .insertInto('affiliate_trade_volumes')
          .values({
            chain_id: chain.chainId,
            block_number: block,
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
      const last = trades.rows[trades.rows.length - 1];
      if (!last || trades.rows.length < this.batch) break;
      after = { block: Number(last.block_number), log: Number(last.log_index) };
    }
    await this.recordCovered(chain.chainId, firstWaiting === null ? covered : firstWaiting - 1);
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
