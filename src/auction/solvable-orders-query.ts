/**
 * The orders that may enter an auction, in one indexed query (the partial index `orders_open` on
 * (chain_id, valid_to) where not cancelled): not cancelled by API or on chain, not expired, valid from now, not
 * fully executed; with their executed amounts (from indexed trades), latest presignature and stored quote.
 * Balances, prices and presignature state are judged by the builder, which records why an order is left out.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { fromNumeric, toBytes, toHex } from '../db/codec.js';
import { notFullyExecutedSql } from '../db/order-fill-sql.js';
import { executedAmountsFromColumns, orderFieldsFromColumns, type ExecutedAmounts, type OrderColumns, type StoredOrderFields } from '../orderbook/orders/order-fields.js';
import type { DB } from '../db/schema.js';

export interface SolvableOrderRow extends StoredOrderFields, ExecutedAmounts {
  /** unix seconds */
  created: number;
  /** latest PreSignature event of a presign order (null: none, or not a presign order) */
  presigned: boolean | null;
  quote: { sellAmount: bigint; buyAmount: bigint; fee: bigint; solver: string } | null;
}

interface RawRow extends OrderColumns {
  created_at: Date | string;
  executed_sell: string | null;
  executed_buy: string | null;
  executed_fee: string | null;
  presigned: boolean | null;
  q_sell: string | null;
  q_buy: string | null;
  q_fee: string | null;
  q_solver: string | null;
}

/** Live orders at `nowSeconds` (the auction block's timestamp). */
export async function querySolvableOrders(db: Kysely<DB>, chainId: number, nowSeconds: number): Promise<SolvableOrderRow[]> {
  const { rows } = await sql<RawRow>`
    select o.uid, o.owner, o.created_at, o.sell_token, o.buy_token, o.receiver, o.sell_amount, o.buy_amount, o.valid_to,
           o.app_data, o.fee_amount, o.kind, o.partially_fillable, o.signature, o.signing_scheme, o.sell_token_balance,
           o.buy_token_balance, o.class,
           t.sell as executed_sell, t.buy as executed_buy, t.fee as executed_fee,
           p.signed as presigned,
           q.sell_amount as q_sell, q.buy_amount as q_buy, q.fee_amount as q_fee, q.solver as q_solver
    from orders o
    left join lateral (
      select sum(x.sell_amount) as sell, sum(x.buy_amount) as buy, sum(x.fee_amount) as fee
      from trades x where x.chain_id = o.chain_id and x.order_uid = o.uid) t on true
    left join lateral (
      select e.signed from presignature_events e
      where o.signing_scheme = 'presign' and e.chain_id = o.chain_id and e.order_uid = o.uid
      order by e.block_number desc, e.log_index desc limit 1) p on true
    left join order_quotes q on q.chain_id = o.chain_id and q.order_uid = o.uid
    where o.chain_id = ${chainId}
      and o.cancellation_timestamp is null
      and o.valid_to >= ${nowSeconds}
      and (o.valid_from is null or o.valid_from <= ${nowSeconds})
      and not exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)
      and ${notFullyExecutedSql({ soldBeforeFees: sql`t.sell - t.fee`, bought: sql`t.buy` })}
    order by o.created_at, o.uid`.execute(db);
  return rows.map(fromRawRow);
}

function fromRawRow(r: RawRow): SolvableOrderRow {
  return {
    ...orderFieldsFromColumns(r),
    ...executedAmountsFromColumns(r),
    created: Math.floor(new Date(r.created_at).getTime() / 1000),
    presigned: r.presigned === null || r.presigned === undefined ? null : Boolean(r.presigned),
    quote:
      r.q_sell === null || r.q_sell === undefined
        ? null
        : { sellAmount: fromNumeric(r.q_sell), buyAmount: fromNumeric(r.q_buy), fee: fromNumeric(r.q_fee), solver: r.q_solver ?? '' },
  };
}

/** Full app-data documents by hash (only the hashes asked for; the builder caches what it parsed). */
export async function queryAppData(db: Kysely<DB>, hashes: Hex[]): Promise<Map<Hex, string>> {
  if (hashes.length === 0) return new Map();
  const rows = await db.selectFrom('app_data').select(['contract_app_data', 'full_app_data']).where('contract_app_data', 'in', hashes.map(toBytes)).execute();
  return new Map(rows.map((r) => [toHex(r.contract_app_data), Buffer.from(r.full_app_data).toString('utf8')]));
}
