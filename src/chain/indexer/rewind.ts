/**
 * Undoes everything indexed above a block (inside the caller's transaction): holder balances are reversed from
 * the transfers being removed, then every event row, pool discovered by a factory and remembered block header
 * above the block is deleted; the `traded` order events of removed settlements are retracted and settlement
 * submissions mined above the block are marked `reorged`. Returns what the removed rows touched, for listeners.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { ZERO_ADDRESS, type Touched } from './decode-logs.js';

const EVENT_TABLES = [
  'trades', 'settlements', 'invalidations', 'presignature_events', 'settlement_interactions', 'erc20_transfers', 'amm_syncs', 'amm_swaps',
  'ethflow_placements', 'ethflow_invalidations', 'ethflow_refunds',
] as const;

async function distinct(db: Kysely<DB>, query: ReturnType<typeof sql<{ v: Uint8Array }>>): Promise<string[]> {
  const result = await query.execute(db);
  return result.rows.map((r) => toHex(r.v));
}

async function touchedAbove(db: Kysely<DB>, chainId: number, block: number): Promise<Touched> {
  const orderUids = await distinct(
    db,
    sql<{ v: Uint8Array }>`select order_uid as v from trades where chain_id = ${chainId} and block_number > ${block}
      union select order_uid from invalidations where chain_id = ${chainId} and block_number > ${block}
      union select order_uid from presignature_events where chain_id = ${chainId} and block_number > ${block}
      union select order_uid from ethflow_placements where chain_id = ${chainId} and block_number > ${block}
      union select order_uid from ethflow_invalidations where chain_id = ${chainId} and block_number > ${block}
      union select order_uid from ethflow_refunds where chain_id = ${chainId} and block_number > ${block}`,
  );
  const owners = await distinct(
    db,
    sql<{ v: Uint8Array }>`select owner as v from trades where chain_id = ${chainId} and block_number > ${block}
      union select owner from invalidations where chain_id = ${chainId} and block_number > ${block}
      union select owner from presignature_events where chain_id = ${chainId} and block_number > ${block}
      union select sender from ethflow_placements where chain_id = ${chainId} and block_number > ${block}
      union select from_address from erc20_transfers where chain_id = ${chainId} and block_number > ${block}
      union select to_address from erc20_transfers where chain_id = ${chainId} and block_number > ${block}`,
  );
  const tokens = await distinct(
    db,
    sql<{ v: Uint8Array }>`select token as v from erc20_transfers where chain_id = ${chainId} and block_number > ${block}
      union select sell_token from trades where chain_id = ${chainId} and block_number > ${block}
      union select buy_token from trades where chain_id = ${chainId} and block_number > ${block}`,
  );
  const pools = await distinct(
    db,
    sql<{ v: Uint8Array }>`select pool as v from amm_syncs where chain_id = ${chainId} and block_number > ${block}
      union select pool from amm_swaps where chain_id = ${chainId} and block_number > ${block}
      union select address from amm_pools where chain_id = ${chainId} and factory is not null and created_block > ${block}`,
  );
  return {
    orderUids: orderUids as Hex[],
    owners: owners.filter((o) => o !== ZERO_ADDRESS) as Address[],
    tokens: tokens as Address[],
    pools: pools as Address[],
  };
}

/** Removes all indexed data of `chainId` above `block`; returns what it touched and the discovered pools removed. */
export async function rewindAbove(db: Kysely<DB>, chainId: number, block: number): Promise<{ touched: Touched; removedPools: Address[] }> {
  const touched = await touchedAbove(db, chainId, block);
  const zero = toBytes(ZERO_ADDRESS);

  // reverse the removed transfers: the sender gets the value back, the recipient gives it up
  await sql`
    insert into token_holder_balances (chain_id, token, holder, balance)
    select ${chainId}::integer, token, holder, sum(delta) from (
      select token, from_address as holder, value as delta from erc20_transfers where chain_id = ${chainId} and block_number > ${block}
      union all
      select token, to_address as holder, -value as delta from erc20_transfers where chain_id = ${chainId} and block_number > ${block}
    ) removed
    where holder <> ${zero}
    group by token, holder
    having sum(delta) <> 0
    on conflict (chain_id, token, holder) do update set balance = token_holder_balances.balance + excluded.balance`.execute(db);
  if (touched.tokens.length > 0) {
    await db
      .deleteFrom('token_holder_balances')
      .where('chain_id', '=', chainId)
      .where('token', 'in', touched.tokens.map(toBytes))
      .where('balance', '=', '0')
      .execute();
  }

  // orders that eth-flow placements in the lost blocks created go with them (one placed again in a surviving
  // block is created again when that block is indexed)
  await sql`
    with lost as (
      select order_uid from ethflow_placements p
      where p.chain_id = ${chainId} and p.block_number > ${block}
        and not exists (select 1 from ethflow_placements k where k.chain_id = p.chain_id and k.order_uid = p.order_uid and k.block_number <= ${block})
    ), q as (
      delete from order_quotes where chain_id = ${chainId} and order_uid in (select order_uid from lost)
    ), e as (
      delete from order_events where chain_id = ${chainId} and order_uid in (select order_uid from lost)
    )
    delete from orders where chain_id = ${chainId} and uid in (select order_uid from lost)`.execute(db);
  for (const table of EVENT_TABLES) {
    await db.deleteFrom(table).where('chain_id', '=', chainId).where('block_number', '>', block).execute();
  }
  // the order book's `traded` events of the removed settlements are retracted (an order keeps one per settlement
  // transaction that filled it; the newest go): its status and competition status follow the surviving branch
  if (touched.orderUids.length > 0) {
    await sql`
      delete from order_events e using (
        select x.id,
          row_number() over (partition by x.order_uid order by x.id desc) as newest,
          count(*) over (partition by x.order_uid) as traded,
          (select count(distinct t.tx_hash) from trades t where t.chain_id = x.chain_id and t.order_uid = x.order_uid) as settlements
        from order_events x
        where x.chain_id = ${chainId} and x.label = 'traded' and x.order_uid in (${sql.join(touched.orderUids.map(toBytes))})
      ) surplus
      where e.id = surplus.id and surplus.newest <= surplus.traded - surplus.settlements`.execute(db);
  }
  const removed = await db
    .deleteFrom('amm_pools')
    .where('chain_id', '=', chainId)
    .where('factory', 'is not', null)
    .where('created_block', '>', block)
    .returning('address')
    .execute();
  await db.deleteFrom('indexed_blocks').where('chain_id', '=', chainId).where('number', '>', block).execute();
  // settlement transactions of the lost branch: the competition no longer points at them (by_tx_hash 404) and
  // they stop holding their orders, which are open again
  await db
    .updateTable('competition_settlements')
    .set({ status: 'reorged', updated_at: sql`now()` } as never)
    .where('chain_id', '=', chainId)
    .where('status', 'in', ['mined', 'settled'])
    .where('block_number', '>', block)
    .execute();
  return { touched, removedPools: removed.map((r) => toHex(r.address) as Address) };
}
