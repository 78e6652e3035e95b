/**
 * Reads of the indexed Uniswap-V2 pools (tables of 002_indexer): which pools exist, their current reserves,
 * their reserves sampled in fixed time buckets, and their swap volumes. Every read is one query for all the
 * pools asked about (never one per pool); the market services build on these and never write SQL themselves.
 *
 * @example
 *   const pools = await poolsBetween(db, chainId, [[weth, usdc]]);
 *   const now = await latestReserves(db, chainId, pools.map((p) => p.address));
 *   const vols = await swapTotals(db, chainId, null, new Date(Date.now() - 86_400_000));
 */
import { sql, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { fromNumeric, toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';

export interface IndexedPool {
  address: Address;
  token0: Address;
  token1: Address;
  factory: Address | null;
}

export interface Reserves {
  reserve0: bigint;
  reserve1: bigint;
  /** block timestamp of the Sync, unix ms */
  at: number;
}

export interface SwapTotals {
  swaps: number;
  in0: bigint;
  in1: bigint;
  out0: bigint;
  out1: bigint;
}

const lower = (hex: string) => hex.toLowerCase() as Address;
const bytesList = (addresses: readonly Address[]) => sql.join(addresses.map((a) => sql`${toBytes(a)}`));

function toPool(row: { address: Uint8Array; token0: Uint8Array; token1: Uint8Array; factory: Uint8Array | null }): IndexedPool {
  return { address: lower(toHex(row.address)), token0: lower(toHex(row.token0)), token1: lower(toHex(row.token1)), factory: row.factory ? lower(toHex(row.factory)) : null };
}

/** The pools of the chain (all of them when `addresses` is null). */
export async function listPools(db: Kysely<DB>, chainId: number, addresses: readonly Address[] | null): Promise<IndexedPool[]> {
  if (addresses && addresses.length === 0) return [];
  let query = db.selectFrom('amm_pools').select(['address', 'token0', 'token1', 'factory']).where('chain_id', '=', chainId);
  if (addresses) query = query.where('address', 'in', addresses.map((a) => toBytes(a)));
  const rows = await query.orderBy('address').execute();
  return rows.map(toPool);
}

/** The pools trading any of the given token pairs (either order). */
export async function poolsBetween(db: Kysely<DB>, chainId: number, pairs: ReadonlyArray<readonly [Address, Address]>): Promise<IndexedPool[]> {
  const distinct = new Map<string, [Address, Address]>();
  for (const [a, b] of pairs) {
    if (a === b) continue;
    const [lo, hi] = a < b ? [a, b] : [b, a];
    distinct.set(`${lo}-${hi}`, [lo, hi]);
  }
  if (distinct.size === 0) return [];
  const rows = await db
    .selectFrom('amm_pools')
    .select(['address', 'token0', 'token1', 'factory'])
    .where('chain_id', '=', chainId)
    .where((eb) =>
      eb.or(
        [...distinct.values()].flatMap(([lo, hi]) => [
          eb.and([eb('token0', '=', toBytes(lo)), eb('token1', '=', toBytes(hi))]),
          eb.and([eb('token0', '=', toBytes(hi)), eb('token1', '=', toBytes(lo))]),
        ]),
      ),
    )
    .orderBy('address')
    .execute();
  return rows.map(toPool);
}

/**
 * The reserves of the latest Sync of each pool (at or before `at` when given): one index lookup per pool
 * through a lateral join. Pools without any Sync are absent from the map.
 */
export async function latestReserves(db: Kysely<DB>, chainId: number, pools: readonly Address[] | null, at?: Date): Promise<Map<Address, Reserves>> {
  if (pools && pools.length === 0) return new Map();
  const result = await sql<{ pool: Uint8Array; reserve0: string; reserve1: string; block_timestamp: Date }>`
    select p.address as pool, s.reserve0, s.reserve1, s.block_timestamp
    from amm_pools p
    cross join lateral (
      select reserve0, reserve1, block_timestamp
      from amm_syncs s
      where s.chain_id = p.chain_id and s.pool = p.address ${at ? sql`and s.block_timestamp <= ${at}` : sql``}
      order by s.block_timestamp desc, s.block_number desc, s.log_index desc
      limit 1
    ) s
    where p.chain_id = ${chainId} ${pools ? sql`and p.address in (${bytesList(pools)})` : sql``}`.execute(db);
  const out = new Map<Address, Reserves>();
  for (const row of result.rows) {
    out.set(lower(toHex(row.pool)), { reserve0: fromNumeric(row.reserve0), reserve1: fromNumeric(row.reserve1), at: new Date(row.block_timestamp).getTime() });
  }
  return out;
}

export interface BucketedReserves {
  /** reserves as of `fromMs` (the last Sync at or before it), when there was one */
  initial: Map<Address, Reserves>;
  /** per pool: bucket number (floor(unix seconds / step)) → reserves of the last Sync in that bucket, ascending */
  buckets: Map<Address, Array<{ bucket: number; reserve0: bigint; reserve1: bigint }>>;
}

/**
 * The reserves of each pool in fixed buckets of `stepSeconds` over (fromMs, toMs]: the last Sync of each
 * bucket (DISTINCT ON pool, bucket), plus each pool's reserves at the start of the window. Buckets without a
 * Sync are absent; the caller carries the last value forward.
 */
export async function bucketedReserves(db: Kysely<DB>, chainId: number, pools: readonly Address[], fromMs: number, toMs: number, stepSeconds: number): Promise<BucketedReserves> {
  if (pools.length === 0) return { initial: new Map(), buckets: new Map() };
  const from = new Date(fromMs);
  const to = new Date(toMs);
  const [initial, result] = await Promise.all([
    latestReserves(db, chainId, pools, from),
    sql<{ pool: Uint8Array; bucket: number | string; reserve0: string; reserve1: string }>`
      select distinct on (pool, bucket) pool, bucket, reserve0, reserve1
      from (
        select pool, floor(extract(epoch from block_timestamp) / ${stepSeconds})::bigint as bucket, reserve0, reserve1, block_number, log_index
        from amm_syncs
        where chain_id = ${chainId} and pool in (${bytesList(pools)}) and block_timestamp > ${from} and block_timestamp <= ${to}
      ) s
      order by pool, bucket, block_number desc, log_index desc`.execute(db),
  ]);
  const buckets = new Map<Address, Array<{ bucket: number; reserve0: bigint; reserve1: bigint }>>();
  for (const row of result.rows) {
    const pool = lower(toHex(row.pool));
    let list = buckets.get(pool);
    if (!list) buckets.set(pool, (list = []));
    list.push({ bucket: Number(row.bucket), reserve0: fromNumeric(row.reserve0), reserve1: fromNumeric(row.reserve1) });
  }
  return { initial, buckets };
}

/** Swap counts and amounts per pool since `since` — ONE grouped query for all pools (or the given ones). */
export async function swapTotals(db: Kysely<DB>, chainId: number, pools: readonly Address[] | null, since: Date): Promise<Map<Address, SwapTotals>> {
  if (pools && pools.length === 0) return new Map();
  let query = db
    .selectFrom('amm_swaps')
    .select((eb) => [
      'pool',
      eb.fn.countAll<number | string>().as('swaps'),
      eb.fn.sum<string>('amount0_in').as('in0'),
      eb.fn.sum<string>('amount1_in').as('in1'),
      eb.fn.sum<string>('amount0_out').as('out0'),
      eb.fn.sum<string>('amount1_out').as('out1'),
    ])
    .where('chain_id', '=', chainId)
    .where('block_timestamp', '>', since);
  if (pools) query = query.where('pool', 'in', pools.map((p) => toBytes(p)));
  const rows = await query.groupBy('pool').execute();
  const out = new Map<Address, SwapTotals>();
  for (const row of rows) {
    out.set(lower(toHex(row.pool)), {
      swaps: Number(row.swaps),
      in0: fromNumeric(row.in0),
      in1: fromNumeric(row.in1),
      out0: fromNumeric(row.out0),
      out1: fromNumeric(row.out1),
    });
  }
  return out;
}
