/**
 * Order events (table `order_events`) from chain truth and from each auction, each transition written exactly
 * once, with labels as upstream: created (written by the order book), ready (enters an auction), filtered /
 * invalid + reason (left out of one), considered (in a losing solution), executing (in the winning one),
 * traded (one per settlement transaction that filled it), cancelled (by API, or on chain by `invalidateOrder`),
 * expired (validTo passed before it was filled).
 *
 * "Exactly once": auction events are written only when they differ from the order's latest event (so an order
 * that stays in the auction block after block gets one `ready`, and one that stays underfunded one `invalid`);
 * `traded` is written until there is one per distinct settlement transaction of the order, `cancelled` and
 * `expired` when the order has none. The latest event of the orders in play is kept in memory; what is not
 * there is read from the database in one query.
 */
import { sql, type Kysely } from 'kysely';
import type { Hex } from 'viem';
import { toBytes, toHex } from '../db/codec.js';
import { notFullyExecutedSql } from '../db/order-fill-sql.js';
import type { DB } from '../db/schema.js';
import type { ExcludedOrder } from '../solver/auction-types.js';

export type OrderEventLabel = 'created' | 'ready' | 'filtered' | 'invalid' | 'considered' | 'executing' | 'traded' | 'cancelled' | 'expired';

interface Latest {
  label: string;
  reason: string | null;
}

interface NewEvent {
  uid: Hex;
  label: OrderEventLabel;
  reason: string | null;
}

/** Rows per insert statement (3 parameters each, well under PostgreSQL's limit). */
const INSERT_CHUNK = 5_000;

export class OrderLifecycle {
  private readonly latest = new Map<Hex, Latest>();
  private queue: Promise<unknown> = Promise.resolve();
  /** expiry is looked for from here on (unix seconds) */
  private expiredSince: number | null = null;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  /** Runs writers one at a time, so the in-memory latest events never race. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  /** After an auction was built: `ready` for its orders, `filtered`/`invalid` (+ reason) for the ones left out. */
  afterAuction(included: Hex[], excluded: ExcludedOrder[]): Promise<number> {
    return this.serial(async () => {
      const events: NewEvent[] = [
        ...included.map((uid) => ({ uid, label: 'ready' as const, reason: null })),
        ...excluded.map((e) => ({ uid: e.uid, label: e.label, reason: e.reason })),
      ];
      const written = await this.writeChanged(events);
      // keep only the orders in play (and what was just written) in memory
      const inPlay = new Set<Hex>([...included, ...excluded.map((e) => e.uid)]);
      for (const uid of this.latest.keys()) if (!inPlay.has(uid)) this.latest.delete(uid);
      return written;
    });
  }

  /** After the competition: `executing` for the winning solution's orders, `considered` for the other solutions' ones. */
  afterCompetition(executing: Hex[], considered: Hex[]): Promise<number> {
    const winning = new Set(executing);
    return this.serial(() =>
      this.writeChanged([
        ...executing.map((uid) => ({ uid, label: 'executing' as const, reason: null })),
        ...considered.filter((uid) => !winning.has(uid)).map((uid) => ({ uid, label: 'considered' as const, reason: null })),
      ]),
    );
  }

  /** Orders taken out of the auction after it was built (they made a settlement revert): `filtered` + reason. */
  afterExclusion(excluded: ExcludedOrder[]): Promise<number> {
    return this.serial(() => this.writeChanged(excluded.map((e) => ({ uid: e.uid, label: e.label, reason: e.reason }))));
  }

  /**
   * After the indexer committed a range touching these orders: one `traded` per settlement transaction that
   * filled the order, and `cancelled` for an on-chain invalidation. Orders not in the book are ignored.
   */
  afterIndexed(orderUids: Hex[]): Promise<number> {
    return this.serial(async () => {
      if (orderUids.length === 0) return 0;
      const { rows } = await sql<{ uid: Uint8Array; settlements: number | string; traded: number | string; invalidated: boolean; cancelled: boolean }>`
        select o.uid,
          (select count(distinct t.tx_hash) from trades t where t.chain_id = o.chain_id and t.order_uid = o.uid) as settlements,
          (select count(*) from order_events e where e.chain_id = o.chain_id and e.order_uid = o.uid and e.label = 'traded') as traded,
          exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid) as invalidated,
          exists (select 1 from order_events e where e.chain_id = o.chain_id and e.order_uid = o.uid and e.label = 'cancelled') as cancelled
        from orders o
        where o.chain_id = ${this.chainId} and o.uid in (${sql.join(orderUids.map(toBytes))})`.execute(this.db);
      const events: NewEvent[] = [];
      for (const row of rows) {
        const uid = toHex(row.uid);
        for (let i = Number(row.traded); i < Number(row.settlements); i++) events.push({ uid, label: 'traded', reason: null });
        if (row.invalidated && !row.cancelled) events.push({ uid, label: 'cancelled', reason: 'onchain_invalidation' });
      }
      await this.insert(events);
      return events.length;
    });
  }

  /**
   * `expired` for orders whose validTo passed (before `nowSeconds`) without being filled or cancelled. Looks at
   * orders that expired since the previous call (the first call: the past week), through the open-orders index.
   */
  expire(nowSeconds: number): Promise<number> {
    return this.serial(async () => {
      const since = this.expiredSince ?? nowSeconds - 7 * 24 * 3600;
      const { rows } = await sql<{ uid: Uint8Array }>`
        select o.uid from orders o
        left join lateral (
          select sum(x.sell_amount - x.fee_amount) as sell, sum(x.buy_amount) as buy
          from trades x where x.chain_id = o.chain_id and x.order_uid = o.uid) t on true
        where o.chain_id = ${this.chainId}
          and o.cancellation_timestamp is null
          -- an eth-flow order expires at the user's deadline (its signed validTo never comes)
          and ((o.true_valid_to is null and o.valid_to < ${nowSeconds} and o.valid_to >= ${since})
            or (o.true_valid_to < ${nowSeconds} and o.true_valid_to >= ${since}))
          and not exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)
          and not exists (select 1 from ethflow_invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)
          and ${notFullyExecutedSql({ soldBeforeFees: sql`t.sell`, bought: sql`t.buy` })}
          and not exists (select 1 from order_events e where e.chain_id = o.chain_id and e.order_uid = o.uid and e.label = 'expired')`.execute(this.db);
      await this.insert(rows.map((r) => ({ uid: toHex(r.uid), label: 'expired' as const, reason: null })));
      // an order expiring at exactly `nowSeconds` is looked at next time
      this.expiredSince = nowSeconds;
      return rows.length;
    });
  }

  /** Writes the events that differ from each order's latest event; returns how many were written. */
  private async writeChanged(events: NewEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    await this.loadLatest(events.map((e) => e.uid));
    const changed = events.filter((e) => {
      const last = this.latest.get(e.uid);
      return !last || last.label !== e.label || last.reason !== e.reason;
    });
    await this.insert(changed);
    return changed.length;
  }

  private async loadLatest(uids: Hex[]): Promise<void> {
    const missing = [...new Set(uids)].filter((uid) => !this.latest.has(uid));
    for (let i = 0; i < missing.length; i += INSERT_CHUNK) {
      const chunk = missing.slice(i, i + INSERT_CHUNK);
      const { rows } = await sql<{ order_uid: Uint8Array; label: string; reason: string | null }>`
        select distinct on (order_uid) order_uid, label, reason from order_events
        where chain_id = ${this.chainId} and order_uid in (${sql.join(chunk.map(toBytes))})
        order by order_uid, id desc`.execute(this.db);
      for (const row of rows) this.latest.set(toHex(row.order_uid), { label: row.label, reason: row.reason });
    }
  }

  private async insert(events: NewEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += INSERT_CHUNK) {
      const chunk = events.slice(i, i + INSERT_CHUNK);
      await this.db
        .insertInto('order_events')
        .values(chunk.map((e) => ({ chain_id: this.chainId, order_uid: toBytes(e.uid), label: e.label, reason: e.reason })))
        .execute();
    }
    for (const e of events) this.latest.set(e.uid, { label: e.label, reason: e.reason });
  }
}
