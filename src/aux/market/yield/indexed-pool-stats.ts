/**
 * First-party pool yields (spec §2 Pool) from the indexed Uniswap-V2 pools:
 *
 * - reserves: the latest indexed Sync of each pool (one lateral query for all pools);
 * - volume: the swaps of the last 24 hours, ONE grouped query (sum of amounts in and out per pool);
 * - USD valuation: a pool side that is a reference token (wrapped native, USD stablecoins) uses its USD price;
 *   the other side is valued at the pool's own spot price (reserve ratio), so for a constant-product pool
 *   TVL = 2 × the reference side. A pool without a reference token is valued with the USD prices of its tokens
 *   from the price service when pools are asked for by address (not for the top-by-TVL list, which would price
 *   every token of the chain); with neither, tvl, volume and apr are null ("incomplete data", spec §4.6);
 * - tvl = Σ reserve_i / 10^decimals_i × price_i; volume = Σ amount_in_i / 10^decimals_i × price_i (every swap
 *   counted once, at its input: exactly what the 0.3 % fee is charged on), valued at current prices;
 * - fee = 0.3 (percent, Uniswap V2); apr = volume × fee% × 365 ÷ tvl × 100, rounded to 6 decimals.
 *
 * Pools asked for that are not indexed are omitted (the caller may ask another source); answers keep the order
 * of the request. The top list (addresses null) holds the pools with a known TVL, largest first.
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { DB } from '../../../db/schema.js';
import { latestReserves, listPools, swapTotals } from '../indexed-pools.js';
import type { PoolQuery, PoolRecord, PoolSource } from '../../../providers/ports/market.js';

export const UNISWAP_V2_FEE_PERCENT = 0.3;
const DAY_MS = 86_400_000;

export interface IndexedPoolStatsOptions {
  db: Kysely<DB>;
  /** project name of the pools (e.g. "uniswap-v2") */
  project: string;
  feePercent?: number;
  /** tokens whose USD price values a pool (wrapped native, USD stablecoins; lowercase) */
  referenceTokens: readonly Address[];
  /** USD per whole token, null when there is none; rejects on a transient failure */
  usdPrice: (token: Address) => Promise<number | null>;
  decimals: (tokens: Address[]) => Promise<Array<number | null>>;
  now?: () => number;
  /** concurrent price lookups for pools without a reference token (default 8) */
  priceConcurrency?: number;
}

export const roundTo6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** apr in percent from 24 h volume and TVL, rounded to 6 decimals; null when TVL is not positive. */
export function poolApr(volumeUsd: number, tvlUsd: number, feePercent: number): number | null {
  if (!(tvlUsd > 0) || !Number.isFinite(volumeUsd)) return null;
  return roundTo6(((volumeUsd * (feePercent / 100) * 365) / tvlUsd) * 100);
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

export class IndexedPoolStats implements PoolSource {
  readonly name = 'indexer';
  private readonly now: () => number;
  private readonly references: Set<string>;

  constructor(private readonly options: IndexedPoolStatsOptions) {
    this.now = options.now ?? Date.now;
    this.references = new Set(options.referenceTokens.map((t) => t.toLowerCase()));
  }

  async lookup(query: PoolQuery): Promise<PoolRecord[] | null> {
    const { db } = this.options;
    const pools = await listPools(db, query.chainId, query.addresses);
    if (pools.length === 0) return null;
    const addresses = query.addresses ? pools.map((p) => p.address) : null;
    const [reserves, volumes] = await Promise.all([
      latestReserves(db, query.chainId, addresses),
      swapTotals(db, query.chainId, addresses, new Date(this.now() - DAY_MS)),
    ]);

    const tokens = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))];
    const decimalsList = await this.options.decimals(tokens);
    const decimals = new Map(tokens.map((t, i) => [t, decimalsList[i] ?? null]));

    // USD prices: reference tokens always; other tokens only for pools asked by address that lack a reference side
    const wanted = new Set<Address>(tokens.filter((t) => this.references.has(t)));
    if (query.addresses) {
      for (const p of pools) {
        if (this.references.has(p.token0) || this.references.has(p.token1)) continue;
        wanted.add(p.token0);
        wanted.add(p.token1);
      }
    }
    const wantedList = [...wanted];
    const priceList = await mapLimited(wantedList, this.options.priceConcurrency ?? 8, (t) => this.options.usdPrice(t));
    const prices = new Map(wantedList.map((t, i) => [t, priceList[i] ?? null]));

    const fee = this.options.feePercent ?? UNISWAP_V2_FEE_PERCENT;
    const records = pools.map((pool): PoolRecord => {
      const record: PoolRecord = { contract_address: pool.address, chain_id: query.chainId, project: this.options.project, apr: null, fee, tvl: null, volume: null };
      const r = reserves.get(pool.address);
      const d0 = decimals.get(pool.token0);
      const d1 = decimals.get(pool.token1);
      if (!r || d0 == null || d1 == null || r.reserve0 <= 0n || r.reserve1 <= 0n) return record;
      const x0 = Number(r.reserve0) / 10 ** d0;
      const x1 = Number(r.reserve1) / 10 ** d1;
      let p0 = prices.get(pool.token0) ?? null;
      let p1 = prices.get(pool.token1) ?? null;
      // value the non-reference side at the pool's spot price
      if (this.references.has(pool.token0) && p0 !== null && !this.references.has(pool.token1)) p1 = (p0 * x0) / x1;
      else if (this.references.has(pool.token1) && p1 !== null && !this.references.has(pool.token0)) p0 = (p1 * x1) / x0;
      else if (p0 === null && p1 !== null) p0 = (p1 * x1) / x0;
      else if (p1 === null && p0 !== null) p1 = (p0 * x0) / x1;
      if (p0 === null || p1 === null) return record;
      const tvl = x0 * p0 + x1 * p1;
      const v = volumes.get(pool.address);
      const volume = v ? (Number(v.in0) / 10 ** d0) * p0 + (Number(v.in1) / 10 ** d1) * p1 : 0;
      return { ...record, tvl, volume, apr: poolApr(volume, tvl, fee) };
    });

    if (query.addresses) {
      const byAddress = new Map(records.map((r) => [r.contract_address, r]));
      return query.addresses.map((a) => byAddress.get(a)).filter((r): r is PoolRecord => r !== undefined).slice(0, query.limit);
    }
    // the top list ranks by TVL: pools that cannot be valued are left out of it (asked by address, they are answered)
    return records.filter((r) => r.tvl !== null).sort((a, b) => b.tvl! - a.tvl!).slice(0, query.limit);
  }
}
