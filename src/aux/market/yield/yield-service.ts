/**
 * Pool yields of one chain (spec §4.6): the first-party indexed pools, completed by an optional external
 * analytics source (e.g. competitor pools from Dune) — first-party wins for a pool both know.
 *
 * - pools(addresses): the pools asked for, in the order asked, duplicates removed; unknown pools are omitted;
 * - pools(null) (empty body): the top pools by TVL of both sources together, at most 1000 (pools a source cannot
 *   value are not ranked: they come last, after every pool with a TVL);
 * - averageApr(): per project, the mean APR of its pools with a known APR among the top pools, 6 decimals —
 *   `{"uniswap-v2": 12.345678}`.
 * A failing source never aborts: its pools are missing from the answer (and logged); only when every source
 * failed is the answer MarketError Unavailable.
 */
import type { Address } from 'viem';
import { MarketError } from '../market-error.js';
import type { PoolQuery, PoolRecord, PoolSource } from '../../../providers/ports/market.js';
import { roundTo6 } from './indexed-pool-stats.js';

export const MAX_POOLS = 1000;

export interface YieldServiceOptions {
  chainId: number;
  /** first-party first, then external sources */
  sources: readonly PoolSource[];
  onSourceError?: (source: string, error: unknown) => void;
  /** Cache-Control max-age of the average APR, seconds (spec §8: 21600) */
  averageAprMaxAgeSeconds?: number;
}

export class YieldService {
  readonly averageAprMaxAgeSeconds: number;

  constructor(private readonly options: YieldServiceOptions) {
    this.averageAprMaxAgeSeconds = options.averageAprMaxAgeSeconds ?? 21_600;
  }

  async pools(addresses: readonly Address[] | null, limit: number = MAX_POOLS): Promise<PoolRecord[]> {
    const { chainId } = this.options;
    const wanted = addresses ? [...new Set(addresses.map((a) => a.toLowerCase() as Address))] : null;
    const found = new Map<Address, PoolRecord>();
    let failures = 0;
    let missing = wanted;
    for (const source of this.options.sources) {
      if (missing && missing.length === 0) break;
      const query: PoolQuery = { chainId, addresses: missing, limit };
      let answer: PoolRecord[] | null;
      try {
        answer = await source.lookup(query);
      } catch (error) {
        failures++;
        this.options.onSourceError?.(source.name, error);
        continue;
      }
      for (const pool of answer ?? []) if (!found.has(pool.contract_address)) found.set(pool.contract_address, pool);
      if (wanted) missing = wanted.filter((a) => !found.has(a));
    }
    if (failures === this.options.sources.length && failures > 0) throw new MarketError('Unavailable', `pool data for chain ${chainId} is temporarily unavailable`);
    if (wanted) return wanted.map((a) => found.get(a)).filter((p): p is PoolRecord => p !== undefined).slice(0, limit);
    return [...found.values()].sort((a, b) => (b.tvl ?? -1) - (a.tvl ?? -1)).slice(0, limit);
  }

  async averageApr(): Promise<Record<string, number>> {
    const sums = new Map<string, { total: number; count: number }>();
    for (const pool of await this.pools(null)) {
      if (pool.apr === null || !Number.isFinite(pool.apr)) continue;
      const s = sums.get(pool.project) ?? { total: 0, count: 0 };
      s.total += pool.apr;
      s.count++;
      sums.set(pool.project, s);
    }
    return Object.fromEntries([...sums.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([project, s]) => [project, roundTo6(s.total / s.count)]));
  }
}
