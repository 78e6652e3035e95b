/**
 * Writes decoded events into their tables (inside the caller's transaction) and keeps
 * `token_holder_balances` equal to the net of the indexed transfers: one upsert per (token, holder) touched,
 * rows that reach zero deleted. The zero address is never a holder (mints and burns move supply).
 * Inserts are idempotent: an event already stored (same chain, block and log index — two indexers over
 * overlapping ranges during a leadership hand-over) is skipped, and only transfers actually inserted move
 * holder balances.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { toBytes, toNumeric } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { ZERO_ADDRESS, type DecodedEvents, type TransferEvent } from './decode-logs.js';

/** Bind parameters per statement stay well under PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;

/** Tables keyed by (chain_id, block_number, log_index): one row per log. */
type EventTable =
  | 'trades' | 'settlements' | 'invalidations' | 'presignature_events' | 'settlement_interactions' | 'erc20_transfers' | 'amm_syncs' | 'amm_swaps'
  | 'ethflow_placements' | 'ethflow_invalidations' | 'ethflow_refunds';

/** Inserts event rows, skipping those already stored; returns the keys (`block:logIndex`) of the rows inserted. */
export async function insertRows<T extends EventTable>(db: Kysely<DB>, table: T, rows: Insertable<DB[T]>[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  if (rows.length === 0) return inserted;
  const size = Math.max(1, Math.floor(MAX_PARAMS / Object.keys(rows[0] as object).length));
  for (let i = 0; i < rows.length; i += size) {
    const done = await (db as unknown as Kysely<Record<string, { chain_id: number; block_number: number; log_index: number }>>)
      .insertInto(table)
      .values(rows.slice(i, i + size) as never)
      .onConflict((oc) => oc.columns(['chain_id', 'block_number', 'log_index']).doNothing())
      .returning(['block_number', 'log_index'])
      .execute();
    for (const r of done) inserted.add(`${Number(r.block_number)}:${Number(r.log_index)}`);
  }
  return inserted;
}

function timestampOf(timestamps: ReadonlyMap<number, number>, block: number): Date {
  const seconds = timestamps.get(block);
  if (seconds === undefined) throw new Error(`no timestamp for block ${block}`);
  return new Date(seconds * 1000);
}

/** Inserts every event row; `timestamps` maps each block with events to its timestamp (seconds). */
export async function storeEvents(db: Kysely<DB>, chainId: number, events: DecodedEvents, timestamps: ReadonlyMap<number, number>): Promise<void> {
  const key = (e: { blockNumber: number; logIndex: number }) => ({ chain_id: chainId, block_number: e.blockNumber, log_index: e.logIndex });
  await insertRows(
    db,
    'trades',
    events.trades.map((e) => ({
      ...key(e),
      order_uid: toBytes(e.orderUid),
      owner: toBytes(e.owner),
      sell_token: toBytes(e.sellToken),
      buy_token: toBytes(e.buyToken),
      sell_amount: toNumeric(e.sellAmount),
      buy_amount: toNumeric(e.buyAmount),
      fee_amount: toNumeric(e.feeAmount),
      tx_hash: toBytes(e.txHash),
      block_timestamp: timestampOf(timestamps, e.blockNumber),
    })),
  );
  await insertRows(db, 'settlements', events.settlements.map((e) => ({ ...key(e), solver: toBytes(e.solver), tx_hash: toBytes(e.txHash), auction_id: null })));
  await insertRows(db, 'invalidations', events.invalidations.map((e) => ({ ...key(e), order_uid: toBytes(e.orderUid), owner: toBytes(e.owner), tx_hash: toBytes(e.txHash) })));
  await insertRows(db, 'presignature_events', events.presignatures.map((e) => ({ ...key(e), owner: toBytes(e.owner), order_uid: toBytes(e.orderUid), signed: e.signed })));
  await insertRows(
    db,
    'settlement_interactions',
    events.interactions.map((e) => ({ ...key(e), target: toBytes(e.target), value: toNumeric(e.value), selector: toBytes(e.selector), tx_hash: toBytes(e.txHash) })),
  );
  const insertedTransfers = await insertRows(
    db,
    'erc20_transfers',
    events.transfers.map((e) => ({
      ...key(e),
      token: toBytes(e.token),
      from_address: toBytes(e.from),
      to_address: toBytes(e.to),
      value: toNumeric(e.value),
      kind: e.kind,
      tx_hash: toBytes(e.txHash),
    })),
  );
  await insertRows(
    db,
    'amm_syncs',
    events.syncs.map((e) => ({ ...key(e), pool: toBytes(e.pool), reserve0: toNumeric(e.reserve0), reserve1: toNumeric(e.reserve1), block_timestamp: timestampOf(timestamps, e.blockNumber) })),
  );
  await insertRows(
    db,
    'amm_swaps',
    events.swaps.map((e) => ({
      ...key(e),
      pool: toBytes(e.pool),
      sender: toBytes(e.sender),
      recipient: toBytes(e.to),
      amount0_in: toNumeric(e.amount0In),
      amount1_in: toNumeric(e.amount1In),
      amount0_out: toNumeric(e.amount0Out),
      amount1_out: toNumeric(e.amount1Out),
      tx_hash: toBytes(e.txHash),
      block_timestamp: timestampOf(timestamps, e.blockNumber),
    })),
  );
  await insertRows(
    db,
    'ethflow_placements',
    events.ethflowPlacements.map((e) => ({
      ...key(e),
      tx_hash: toBytes(e.txHash),
      block_time: timestampOf(timestamps, e.blockNumber),
      contract: toBytes(e.contract),
      sender: toBytes(e.sender),
      order_uid: toBytes(e.orderUid),
      owner: toBytes(e.owner),
      sell_token: toBytes(e.order.sellToken),
      buy_token: toBytes(e.order.buyToken),
      receiver: e.order.receiver ? toBytes(e.order.receiver) : null,
      sell_amount: toNumeric(e.order.sellAmount),
      buy_amount: toNumeric(e.order.buyAmount),
      valid_to: e.order.validTo,
      app_data: toBytes(e.order.appData),
      fee_amount: toNumeric(e.order.feeAmount),
      kind: e.order.kind,
      partially_fillable: e.order.partiallyFillable,
      sell_token_balance: e.order.sellTokenBalance,
      buy_token_balance: e.order.buyTokenBalance,
      signing_scheme: e.signingScheme,
      signature: toBytes(e.signature),
      quote_id: e.quoteId.toString(),
      user_valid_to: e.userValidTo,
      placement_error: null,
      ingested_at: null,
    })),
  );
  await insertRows(db, 'ethflow_invalidations', events.ethflowInvalidations.map((e) => ({ ...key(e), tx_hash: toBytes(e.txHash), order_uid: toBytes(e.orderUid) })));
  await insertRows(
    db,
    'ethflow_refunds',
    events.ethflowRefunds.map((e) => ({ ...key(e), tx_hash: toBytes(e.txHash), order_uid: toBytes(e.orderUid), refunder: toBytes(e.refunder) })),
  );
  if (events.pairs.length > 0) {
    await db
      .insertInto('amm_pools')
      .values(
        events.pairs.map((e) => ({
          chain_id: chainId,
          address: toBytes(e.pair),
          token0: toBytes(e.token0),
          token1: toBytes(e.token1),
          factory: toBytes(e.factory),
          created_block: e.blockNumber,
        })),
      )
      .onConflict((oc) => oc.columns(['chain_id', 'address']).doNothing())
      .execute();
  }
  const fresh = events.transfers.filter((t) => insertedTransfers.has(`${t.blockNumber}:${t.logIndex}`));
  await applyHolderDeltas(db, chainId, holderDeltas(fresh));
}

/** Net balance change per (token, holder), zero address and zero nets left out. */
export function holderDeltas(transfers: readonly TransferEvent[]): Map<string, { token: Address; holder: Address; delta: bigint }> {
  const deltas = new Map<string, { token: Address; holder: Address; delta: bigint }>();
  const add = (token: Address, holder: Address, delta: bigint) => {
    if (holder === ZERO_ADDRESS || delta === 0n) return;
    const k = `${token}:${holder}`;
    const entry = deltas.get(k);
    if (entry) entry.delta += delta;
    else deltas.set(k, { token, holder, delta });
  };
  for (const t of transfers) {
    add(t.token, t.from, -t.value);
    add(t.token, t.to, t.value);
  }
  for (const [k, v] of deltas) if (v.delta === 0n) deltas.delete(k);
  return deltas;
}

export async function applyHolderDeltas(db: Kysely<DB>, chainId: number, deltas: Map<string, { token: Address; holder: Address; delta: bigint }>): Promise<void> {
  if (deltas.size === 0) return;
  const rows = [...deltas.values()].map((d) => ({ chain_id: chainId, token: toBytes(d.token), holder: toBytes(d.holder), balance: toNumeric(d.delta) }));
  const size = Math.floor(MAX_PARAMS / 4);
  for (let i = 0; i < rows.length; i += size) {
    await db
      .insertInto('token_holder_balances')
      .values(rows.slice(i, i + size))
      .onConflict((oc) => oc.columns(['chain_id', 'token', 'holder']).doUpdateSet({ balance: sql<string>`token_holder_balances.balance + excluded.balance` }))
      .execute();
  }
  const tokens = [...new Set([...deltas.values()].map((d) => d.token))].map(toBytes);
  await db.deleteFrom('token_holder_balances').where('chain_id', '=', chainId).where('token', 'in', tokens).where('balance', '=', '0').execute();
}
