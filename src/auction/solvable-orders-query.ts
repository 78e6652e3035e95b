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
import type { ExecutedAmounts, OrderClass, SigningSchemeName, StoredOrderFields } from '../orderbook/orders/order-fields.js';
import type { DB } from '../db/schema.js';

export interface SolvableOrderRow extends StoredOrderFields, ExecutedAmounts {
  /** unix seconds */
  created: number;
  /** latest PreSignature event of a presign order (null: none, or not a presign order) */
  presigned: boolean | null;
  quote: { sellAmount: bigint; buyAmount: bigint; fee: bigint; solver: string } | null;
  /** placed through an eth-flow contract: the contract (the owner) and the user's deadline */
  ethflow: { contract: Address; userValidTo: number } | null;
}

/**
 * One order as the query returns it: a JSON array assembled by the database, its entries in the order of
 * `JsonRow`'s elements, with byteas as 0x-hex and amounts as decimal strings (exact: never a JSON number).
 * A row of 26 typed columns costs the driver a parse per field (PGlite decodes each bytea byte by byte, then the
 * builder re-encoded it as hex); the whole result comes back as one JSON array in one text field (one row, one
 * `JSON.parse`), which costs a fraction of that on both engines and spares the per-row overhead of the protocol.
 * Arrays rather than objects: the ~25 key names of an object would be a third of the text, written and escaped
 * by the database and parsed again, in every row.
 */
type JsonRow = [
  uid: Hex,
  owner: Address,
  created: number,
  sellToken: Address,
  buyToken: Address,
  receiver: Address | null,
  sellAmount: string,
  buyAmount: string,
  validTo: number,
  appData: Hex,
  feeAmount: string,
  kind: 'sell' | 'buy',
  partiallyFillable: boolean,
  signature: Hex,
  signingScheme: SigningSchemeName,
  sellTokenBalance: string,
  buyTokenBalance: string,
  orderClass: OrderClass,
  executedSell: string | null,
  executedBuy: string | null,
  executedFee: string | null,
  presigned: boolean | null,
  quote: [sellAmount: string, buyAmount: string, fee: string, solver: string] | null,
  ethflow: [contract: Address, userValidTo: number] | null,
];

const hex = (column: string) => sql.raw(`'0x' || encode(${column}, 'hex')`);

/** Live orders at `nowSeconds` (the auction block's timestamp). */
export async function querySolvableOrders(db: Kysely<DB>, chainId: number, nowSeconds: number): Promise<SolvableOrderRow[]> {
  const { rows } = await sql<{ orders: string | null }>`
    select json_agg(json_build_array(
             ${hex('o.uid')}, ${hex('o.owner')}, floor(extract(epoch from o.created_at))::int8,
             ${hex('o.sell_token')}, ${hex('o.buy_token')}, ${hex('o.receiver')},
             o.sell_amount::text, o.buy_amount::text, o.valid_to,
             ${hex('o.app_data')}, o.fee_amount::text, o.kind,
             o.partially_fillable, ${hex('o.signature')}, o.signing_scheme,
             o.sell_token_balance, o.buy_token_balance, o.class,
             t.sell::text, t.buy::text, t.fee::text,
             p.signed,
             case when q.order_uid is null then null
                  else json_build_array(q.sell_amount::text, q.buy_amount::text, q.fee_amount::text, coalesce(q.solver, '')) end,
             case when ef.order_uid is null then null
                  else json_build_array(${hex('ef.contract')}, ef.user_valid_to) end
           ) order by o.created_at, o.uid)::text as orders
    from orders o
    left join lateral (
      select sum(x.sell_amount) as sell, sum(x.buy_amount) as buy, sum(x.fee_amount) as fee
      from trades x where x.chain_id = o.chain_id and x.order_uid = o.uid) t on true
    left join lateral (
      select e.signed from presignature_events e
      where o.signing_scheme = 'presign' and e.chain_id = o.chain_id and e.order_uid = o.uid
      order by e.block_number desc, e.log_index desc limit 1) p on true
    left join order_quotes q on q.chain_id = o.chain_id and q.order_uid = o.uid
    left join ethflow_placements ef on ef.chain_id = o.chain_id and ef.order_uid = o.uid
    where o.chain_id = ${chainId}
      and o.cancellation_timestamp is null
      and o.valid_to >= ${nowSeconds}
      and (o.true_valid_to is null or o.true_valid_to >= ${nowSeconds})
      and (ef.order_uid is null or (ef.placement_error is null
        and not exists (select 1 from ethflow_invalidations x where x.chain_id = o.chain_id and x.order_uid = o.uid)
        and not exists (select 1 from ethflow_refunds r where r.chain_id = o.chain_id and r.order_uid = o.uid)))
      and (o.valid_from is null or o.valid_from <= ${nowSeconds})
      and not exists (select 1 from invalidations i where i.chain_id = o.chain_id and i.order_uid = o.uid)
      and ${notFullyExecutedSql({ soldBeforeFees: sql`t.sell - t.fee`, bought: sql`t.buy` })}`.execute(db);
  const text = rows[0]?.orders ?? null;
  if (text === null) return []; // json_agg of no rows
  const parsed = JSON.parse(text) as JsonRow[];
  const orders = new Array<SolvableOrderRow>(parsed.length);
  for (let i = 0; i < parsed.length; i++) orders[i] = fromJsonRow(parsed[i]!);
  return orders;
}

function fromJsonRow(r: JsonRow): SolvableOrderRow {
  const [uid, owner, created, sellToken, buyToken, receiver, sellAmount, buyAmount, validTo, appData, feeAmount, kind, partiallyFillable, signature, signingScheme, sellTokenBalance, buyTokenBalance, orderClass, executedSell, executedBuy, executedFee, presigned, quote, ethflow] = r;
  return {
    uid,
    owner,
    sellToken,
    buyToken,
    receiver,
    sellAmount: fromNumeric(sellAmount),
    buyAmount: fromNumeric(buyAmount),
    validTo: Number(validTo),
    appData,
    feeAmount: fromNumeric(feeAmount),
    kind,
    partiallyFillable,
    signature,
    signingScheme,
    sellTokenBalance,
    buyTokenBalance,
    class: orderClass,
    executedSell: fromNumeric(executedSell),
    executedBuy: fromNumeric(executedBuy),
    executedFee: fromNumeric(executedFee),
    created: Number(created),
    presigned,
    quote: quote === null ? null : { sellAmount: fromNumeric(quote[0]), buyAmount: fromNumeric(quote[1]), fee: fromNumeric(quote[2]), solver: quote[3] },
    ethflow: ethflow === null || ethflow === undefined ? null : { contract: ethflow[0], userValidTo: Number(ethflow[1]) },
  };
}

/** Full app-data documents by hash (only the hashes asked for; the builder caches what it parsed). */
export async function queryAppData(db: Kysely<DB>, hashes: Hex[]): Promise<Map<Hex, string>> {
  if (hashes.length === 0) return new Map();
  const rows = await db.selectFrom('app_data').select(['contract_app_data', 'full_app_data']).where('contract_app_data', 'in', hashes.map(toBytes)).execute();
  return new Map(rows.map((r) => [toHex(r.contract_app_data), Buffer.from(r.full_app_data).toString('utf8')]));
}
