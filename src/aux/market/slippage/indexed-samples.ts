/**
 * First-party volatility samples from the indexed Sync events: the price of each token of the pair in a common
 * numeraire — the wrapped native token or a USD stablecoin — every 5 minutes over the window.
 *
 * - Numeraire: the first of [wrapped native, USD stablecoins...] that both tokens reach in the fewest pool hops
 *   (0 for the numeraire itself, 1 for a direct pool, 2 through a hub token); the deepest pool per pair is used.
 * - Samples: the reserves of each pool on the route at the end of every 5-minute bucket — the last Sync in the
 *   bucket, else the last value carried forward (from before the window if need be) — turned into a price per
 *   whole token (decimals applied) and multiplied along the route.
 * - No route, or a pool with no Sync at all in or before the window: null (no market data).
 *
 * @example
 *   const samples = new IndexedMarketSamples({ db, numeraires: [weth, usdc], hubs: [weth, usdc, dai], decimals });
 *   await samples.lookup({ chainId, base: wbtc, quote: usdc, fromMs: now - 86_400_000, toMs: now });
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { DB } from '../../../db/schema.js';
import { bucketedReserves, type Reserves } from '../indexed-pools.js';
import { PoolGraph, hopReserves, type RouteHop } from '../pool-graph.js';
import type { MarketSamples, MarketSamplesQuery, MarketSamplesSource, PricePoint } from '../../../providers/ports/market.js';

export interface IndexedMarketSamplesOptions {
  db: Kysely<DB>;
  /** candidate numeraires in order of preference (lowercase; wrapped native first) */
  numeraires: readonly Address[];
  /** tokens a route may pass through (lowercase) */
  hubs: readonly Address[];
  /** decimals of tokens, null where not an ERC-20 */
  decimals: (tokens: Address[]) => Promise<Array<number | null>>;
  /** bucket length, seconds (default 300) */
  stepSeconds?: number;
}

export class IndexedMarketSamples implements MarketSamplesSource {
  readonly name = 'indexed-syncs';
  private readonly step: number;

  constructor(private readonly options: IndexedMarketSamplesOptions) {
    this.step = options.stepSeconds ?? 300;
  }

  async lookup(query: MarketSamplesQuery): Promise<MarketSamples | null> {
    const { db } = this.options;
    const base = query.base.toLowerCase() as Address;
    const quote = query.quote.toLowerCase() as Address;
    const numeraires = this.options.numeraires.map((n) => n.toLowerCase() as Address);
    const hubs = [...new Set([...numeraires, ...this.options.hubs.map((h) => h.toLowerCase() as Address)])];
    const graph = await PoolGraph.load(db, query.chainId, [base, quote, ...hubs], hubs);

    // the numeraire both tokens reach in the fewest hops
    let chosen: { numeraire: Address; base: RouteHop[]; quote: RouteHop[] } | null = null;
    for (const numeraire of numeraires) {
      const b = graph.routes(base, numeraire, hubs)[0];
      const q = graph.routes(quote, numeraire, hubs)[0];
      if (!b || !q) continue;
      if (!chosen || b.length + q.length < chosen.base.length + chosen.quote.length) chosen = { numeraire, base: b, quote: q };
    }
    if (!chosen) return null;

    const hops = [...chosen.base, ...chosen.quote];
    const pools = [...new Set(hops.map((h) => h.pool.address))];
    const tokens = [...new Set(hops.flatMap((h) => [h.pool.token0, h.pool.token1]))];
    const decimalsList = await this.options.decimals(tokens);
    const decimals = new Map(tokens.map((t, i) => [t, decimalsList[i]]));
    if (decimalsList.some((d) => d === null || d === undefined)) return null;

    const { initial, buckets } = await bucketedReserves(db, query.chainId, pools, query.fromMs, query.toMs, this.step);
    const firstBucket = Math.floor(query.fromMs / 1000 / this.step);
    const lastBucket = Math.floor(query.toMs / 1000 / this.step);

    // reserves of each pool at the end of every bucket of the window (carried forward)
    const grid = new Map<Address, Array<Reserves | null>>();
    for (const pool of pools) {
      const values: Array<Reserves | null> = [];
      let current: Reserves | null = initial.get(pool) ?? null;
      const rows = buckets.get(pool) ?? [];
      let i = 0;
      for (let b = firstBucket; b <= lastBucket; b++) {
        while (i < rows.length && rows[i]!.bucket <= b) {
          current = { reserve0: rows[i]!.reserve0, reserve1: rows[i]!.reserve1, at: rows[i]!.bucket * this.step * 1000 };
          i++;
        }
        values.push(current);
      }
      grid.set(pool, values);
    }

    const series = (route: RouteHop[]): PricePoint[] => {
      const points: PricePoint[] = [];
      for (let b = firstBucket, k = 0; b <= lastBucket; b++, k++) {
        let price = 1;
        for (const hop of route) {
          const reserves = grid.get(hop.pool.address)![k];
          if (!reserves) {
            price = NaN;
            break;
          }
          const { reserveIn, reserveOut } = hopReserves(hop, reserves);
          if (reserveIn <= 0n || reserveOut <= 0n) {
            price = NaN;
            break;
          }
          // whole `to` per whole `from`
          price *= Number(reserveOut) / 10 ** decimals.get(hop.to)! / (Number(reserveIn) / 10 ** decimals.get(hop.from)!);
        }
        if (Number.isFinite(price) && price > 0) points.push({ t: b * this.step * 1000, price });
      }
      return points;
    };

    const baseSeries = series(chosen.base);
    const quoteSeries = series(chosen.quote);
    if (baseSeries.length === 0 || quoteSeries.length === 0) return null;
    const describe = (route: RouteHop[]) => (route.length === 0 ? ['numeraire'] : route.map((h) => `${h.pool.address} (${h.from}→${h.to})`));
    return {
      numeraire: chosen.numeraire,
      stepMs: this.step * 1000,
      base: baseSeries,
      quote: quoteSeries,
      route: { base: describe(chosen.base), quote: describe(chosen.quote) },
    };
  }
}
