/**
 * The producer's reads: fills and on-chain cancellations of a block range, expiries up to a block's time, API
 * cancellations since a time, and the auction's balance/allowance exclusions after an event id.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { fromNumeric, toHex } from '../../db/codec.js';
import { tradeExecutedAmountSql } from '../../db/order-fill-sql.js';
import type { DB } from '../../db/schema.js';
import type { CancellationFacts, FillFacts, OrderFacts } from './order-notifications.js';

interface OrderColumns {
  uid: Uint8Array;
  owner: Uint8Array;
  kind: 'sell' | 'buy';
  sell_token: Uint8Array;
  buy_token: Uint8Array;
  order_sell: string;
  order_buy: string;
}

// an eth-flow order's notifications go to whoever placed it (its owner is the contract)
const ORDER_COLUMNS = sql`o.uid,
  coalesce((select ef.sender from ethflow_placements ef where ef.chain_id = o.chain_id and ef.order_uid = o.uid limit 1), o.owner) as owner,
  o.kind, o.sell_token, o.buy_token, o.sell_amount as order_sell, o.buy_amount as order_buy`;

/**
 * The order `o` was authorised by its owner (issue 19, major 2): signed (eip712, ethsign, eip1271), or a presign
 * order whose owner has called `setPreSignature(uid, true)` on chain. Anyone may post a presign order in anyone's
 * name; until the owner presigns it, it is none of the owner's business and produces no notification.
 */
const OWNER_AUTHORISED = sql`(o.signing_scheme <> 'presign' or exists (
  select 1 from presignature_events ps
  where ps.chain_id = o.chain_id and ps.order_uid = o.uid and ps.owner = o.owner and ps.signed))`;

function orderFacts(row: OrderColumns): OrderFacts {
  return {
    uid: toHex(row.uid),
    owner: toHex(row.owner) as Address,
    kind: row.kind,
    sellToken: toHex(row.sell_token) as Address,
    buyToken: toHex(row.buy_token) as Address,
    sellAmount: fromNumeric(row.order_sell),
    buyAmount: fromNumeric(row.order_buy),
  };
}

/** Executed amount of an order in its kind unit (sell: sell amount before fee; buy: buy amount), over the trades matching `tradeFilter`. */
const executedOf = (tradeFilter: ReturnType<typeof sql>) => sql`(select coalesce(sum(${tradeExecutedAmountSql('p')}), 0)
  from trades p where p.chain_id = o.chain_id and p.order_uid = o.uid and ${tradeFilter})`;

/** Trade events of orders in our book in blocks [from, to], with what the order had executed before each. */
export async function fillsInRange(db: Kysely<DB>, chainId: number, from: number, to: number): Promise<FillFacts[]> {
  const { rows } = await sql<OrderColumns & { block_number: number | string; log_index: number | string; tx_hash: Uint8Array; sell_amount: string; buy_amount: string; fee_amount: string; ts: Date | string | null; executed_before: string }>`
    select t.block_number, t.log_index, t.tx_hash, t.sell_amount, t.buy_amount, t.fee_amount,
      coalesce(t.block_timestamp, (select to_timestamp(b.timestamp) from indexed_blocks b where b.chain_id = t.chain_id and b.number = t.block_number)) as ts,
      ${ORDER_COLUMNS},
      ${executedOf(sql`(p.block_number < t.block_number or (p.block_number = t.block_number and p.log_index < t.log_index))`)} as executed_before
    from trades t join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid
    where t.chain_id = ${chainId} and t.block_number between ${from} and ${to} and ${OWNER_AUTHORISED}
    order by t.block_number, t.log_index`.execute(db);
  return rows.map((r) => ({
    order: orderFacts(r),
    txHash: toHex(r.tx_hash),
    logIndex: Number(r.log_index),
    blockNumber: Number(r.block_number),
    timestamp: r.ts ? new Date(r.ts) : new Date(),
    sellAmount: fromNumeric(r.sell_amount),
    buyAmount: fromNumeric(r.buy_amount),
    feeAmount: fromNumeric(r.fee_amount),
    executedBefore: fromNumeric(r.executed_before),
  }));
}

/** `invalidateOrder` calls in blocks [from, to] (the order may be unknown to our book). */
export async function onChainCancellations(db: Kysely<DB>, chainId: number, from: number, to: number): Promise<CancellationFacts[]> {
  const { rows } = await sql<Partial<OrderColumns> & { i_uid: Uint8Array; i_owner: Uint8Array; tx_hash: Uint8Array; ts: number | string | null }>`
    select i.order_uid as i_uid, i.owner as i_owner, i.tx_hash,
      (select b.timestamp from indexed_blocks b where b.chain_id = i.chain_id and b.number = i.block_number) as ts,
      ${ORDER_COLUMNS}
    from (
      select chain_id, order_uid, owner, tx_hash, block_number, log_index from invalidations
      where chain_id = ${chainId} and block_number between ${from} and ${to}
      union all
      -- a user's invalidateOrder on an eth-flow contract: the order's placer is told
      select x.chain_id, x.order_uid, p.sender, x.tx_hash, x.block_number, x.log_index from ethflow_invalidations x
      join ethflow_placements p on p.chain_id = x.chain_id and p.order_uid = x.order_uid
      where x.chain_id = ${chainId} and x.block_number between ${from} and ${to}
    ) i left join orders o on o.chain_id = i.chain_id and o.uid = i.order_uid
    where (o.uid is null or ${OWNER_AUTHORISED})
    order by i.block_number, i.log_index`.execute(db);
  return rows.map((r) => ({
    uid: toHex(r.i_uid),
    owner: toHex(r.i_owner) as Address,
    order: r.uid ? orderFacts(r as OrderColumns) : null,
    by: 'onchain' as const,
    timestamp: r.ts !== null ? new Date(Number(r.ts) * 1000) : new Date(),
    txHash: toHex(r.tx_hash),
  }));
}

/** Orders cancelled through the API at or after `since` (not the ones that had expired before: they expired). */
export async function apiCancellations(db: Kysely<DB>, chainId: number, since: Date): Promise<CancellationFacts[]> {
  const { rows } = await sql<OrderColumns & { cancelled_at: Date | string }>`
    select ${ORDER_COLUMNS}, o.cancellation_timestamp as cancelled_at
    from orders o
    where o.chain_id = ${chainId} and o.cancellation_timestamp >= ${since}
      and o.cancellation_timestamp <= to_timestamp(o.valid_to) and ${OWNER_AUTHORISED}
    order by o.cancellation_timestamp`.execute(db);
  return rows.map((r) => ({ uid: toHex(r.uid), owner: toHex(r.owner) as Address, order: orderFacts(r), by: 'api' as const, timestamp: new Date(r.cancelled_at), txHash: null }));
}

/**
 * Orders whose validTo is in [since, before) without full execution by trades up to `atBlock`, never cancelled
 * (through the API before their expiry, or on chain).
 */
export async function expiredOrders(db: Kysely<DB>, chainId: number, since: number, before: number, atBlock: number): Promise<Array<OrderFacts & { validTo: number; executed: bigint }>> {
  const { rows } = await sql<OrderColumns & { valid_to: number | string; executed: string }>`
    select * from (
      select ${ORDER_COLUMNS}, coalesce(o.true_valid_to, o.valid_to) as valid_to, ${executedOf(sql`p.block_number <= ${atBlock}`)} as executed
      from orders o
      where o.chain_id = ${chainId}
        -- an eth-flow order expires at its user deadline
        and ((o.true_valid_to is null and o.valid_to >= ${since} and o.valid_to < ${before}) or (o.true_valid_to >= ${since} and o.true_valid_to < ${before})) and ${OWNER_AUTHORISED}
        and (o.cancellation_timestamp is null or o.cancellation_timestamp > to_timestamp(o.valid_to))
        and not exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid and i.block_number <= ${atBlock})
        and not exists (select 1 from ethflow_invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid and i.block_number <= ${atBlock})
    ) x
    where x.executed < case when x.kind = 'sell' then x.order_sell else x.order_buy end
    order by x.valid_to`.execute(db);
  return rows.map((r) => ({ ...orderFacts(r), validTo: Number(r.valid_to), executed: fromNumeric(r.executed) }));
}

export interface InsufficientEvent {
  order: OrderFacts;
  id: number;
  reason: 'insufficient_balance' | 'insufficient_allowance';
  timestamp: Date;
}

/**
 * The auction's balance/allowance exclusions after event `afterId` that start a shortfall: no earlier such event
 * of the order since it was last in an auction (ready, considered, executing) or traded. So an order left out
 * block after block is announced once, and again only after it was funded and fell short anew.
 */
export async function insufficientEvents(db: Kysely<DB>, chainId: number, afterId: number): Promise<InsufficientEvent[]> {
  const { rows } = await sql<OrderColumns & { id: number | string; reason: InsufficientEvent['reason']; timestamp: Date | string }>`
    select e.id, e.reason, e.timestamp, ${ORDER_COLUMNS}
    from order_events e join orders o on o.chain_id = e.chain_id and o.uid = e.order_uid
    where e.chain_id = ${chainId} and e.id > ${afterId}
      and e.label = 'invalid' and e.reason in ('insufficient_balance', 'insufficient_allowance') and ${OWNER_AUTHORISED}
      and not exists (
        select 1 from order_events p
        where p.chain_id = e.chain_id and p.order_uid = e.order_uid and p.id < e.id
          and p.label = 'invalid' and p.reason in ('insufficient_balance', 'insufficient_allowance')
          and not exists (
            select 1 from order_events q
            where q.chain_id = e.chain_id and q.order_uid = e.order_uid and q.id > p.id and q.id < e.id
              and q.label in ('ready', 'considered', 'executing', 'traded')))
    order by e.id`.execute(db);
  return rows.map((r) => ({ order: orderFacts(r), id: Number(r.id), reason: r.reason, timestamp: new Date(r.timestamp) }));
}

export type { Hex };
