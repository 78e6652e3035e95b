/**
 * The indexed pools around a pair of tokens, as a small graph: the deepest pool of each token pair (among pools
 * with at least one Sync) and routes of one or two hops through hub tokens (wrapped native, USD stablecoins,
 * connectors). Used for the volatility samples (token → numeraire) and for price impact (base → quote).
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { DB } from '../../db/schema.js';
import { latestReserves, poolsBetween, type IndexedPool, type Reserves } from './indexed-pools.js';

export interface GraphPool extends IndexedPool {
  reserves: Reserves;
}

/** One hop: trade `from` into `to` through `pool`. */
export interface RouteHop {
  pool: GraphPool;
  from: Address;
  to: Address;
}

export class PoolGraph {
  private readonly best = new Map<string, GraphPool>();

  constructor(pools: readonly GraphPool[]) {
    for (const pool of pools) {
      const key = PoolGraph.key(pool.token0, pool.token1);
      const current = this.best.get(key);
      // deepest = largest product of reserves (a scale-free measure of liquidity)
      if (!current || Number(pool.reserves.reserve0) * Number(pool.reserves.reserve1) > Number(current.reserves.reserve0) * Number(current.reserves.reserve1)) {
        this.best.set(key, pool);
      }
    }
  }

  private static key(a: Address, b: Address): string {
    return a < b ? `${a}-${b}` : `${b}-${a}`;
  }

  /** Reads the pools between every token of `from` and every token of `to` (and their reserves) in two queries. */
  static async load(db: Kysely<DB>, chainId: number, from: readonly Address[], to: readonly Address[]): Promise<PoolGraph> {
    const pairs: Array<[Address, Address]> = [];
    for (const a of from) for (const b of to) if (a !== b) pairs.push([a, b]);
    const pools = await poolsBetween(db, chainId, pairs);
    const reserves = await latestReserves(db, chainId, pools.map((p) => p.address));
    return new PoolGraph(
      pools.flatMap((p) => {
        const r = reserves.get(p.address);
        return r && r.reserve0 > 0n && r.reserve1 > 0n ? [{ ...p, reserves: r }] : [];
      }),
    );
  }

  pool(a: Address, b: Address): GraphPool | null {
    return this.best.get(PoolGraph.key(a, b)) ?? null;
  }

  /** `from` → `to` directly, or through one hub: every such route (direct first). */
  routes(from: Address, to: Address, hubs: readonly Address[]): RouteHop[][] {
    if (from === to) return [[]];
    const out: RouteHop[][] = [];
    const direct = this.pool(from, to);
    if (direct) out.push([{ pool: direct, from, to }]);
    for (const hub of hubs) {
      if (hub === from || hub === to) continue;
      const first = this.pool(from, hub);
      const second = this.pool(hub, to);
      if (first && second) out.push([{ pool: first, from, to: hub }, { pool: second, from: hub, to }]);
    }
    return out;
  }
}

/** Reserves of a hop in its direction of trade. */
export function hopReserves(hop: RouteHop, reserves: Reserves = hop.pool.reserves): { reserveIn: bigint; reserveOut: bigint } {
  return hop.from === hop.pool.token0 ? { reserveIn: reserves.reserve0, reserveOut: reserves.reserve1 } : { reserveIn: reserves.reserve1, reserveOut: reserves.reserve0 };
}
