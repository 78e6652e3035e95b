/**
 * Coingecko adapters (reference auxiliary.md §4): USD spot prices of ERC-20 tokens and 24 h USD price series
 * for the volatility samples. PRO API by default (`https://pro-api.coingecko.com/api/v3`, header
 * `x-cg-pro-api-key`); the demo plan uses `https://api.coingecko.com/api/v3` and `x-cg-demo-api-key`.
 *
 * Calls:
 * - `GET /simple/token_price/{platform}?contract_addresses={lowercase address}&vs_currencies=usd`
 *   → `{ "<address>": { "usd": 1.23 } }`; a missing entry or `usd` means no price.
 * - `GET /coins/{platform}/contract/{address}/market_chart?vs_currency=usd&days=1`
 *   → `{ prices: [[unix ms, usd], ...], market_caps, total_volumes }` (≈ 5-minute points; `interval` omitted:
 *   the PRO plan rejects it for 5-minute data).
 *
 * Outcomes: 200 with a price → value; 200 without one, or 404 → null ("no data", cacheable); anything else
 * (429, 5xx, 401/403, timeouts, malformed bodies) rejects, so the fallback moves on and nothing is cached.
 * Chains without a Coingecko platform (Sepolia, the devnet) answer null without a request.
 * The native asset is priced as the wrapped native token (1:1), which avoids Coingecko's per-chain coin ids.
 */
import type { Address } from 'viem';
import type { MarketSamples, MarketSamplesQuery, MarketSamplesSource, PricePoint, UsdPriceQuery, UsdPriceSource } from './ports/market.js';
import { expectOk, isRecord, malformed, providerRequest, type FetchLike } from './provider-http.js';

export const COINGECKO_PRO_URL = 'https://pro-api.coingecko.com/api/v3';
export const COINGECKO_DEMO_URL = 'https://api.coingecko.com/api/v3';

/** Coingecko asset-platform ids of the chains we serve (Sepolia and the devnet have none). */
export const COINGECKO_PLATFORMS: Readonly<Record<number, string>> = {
  1: 'ethereum',
  100: 'xdai',
  42161: 'arbitrum-one',
  8453: 'base',
  137: 'polygon-pos',
  43114: 'avalanche',
  56: 'binance-smart-chain',
  59144: 'linea',
  9745: 'plasma',
  57073: 'ink',
};

/** Coingecko's 5-minute granularity; series points are rounded to it (reference §3.5). */
export const COINGECKO_STEP_MS = 300_000;

export interface CoingeckoOptions {
  apiKey: string;
  /** 'pro' (default) or 'demo': picks the default base URL and the key header */
  plan?: 'pro' | 'demo';
  baseUrl?: string;
  /** chain id → platform id (default COINGECKO_PLATFORMS) */
  platforms?: Readonly<Record<number, string>>;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'coingecko';

export class CoingeckoClient {
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly platforms: Readonly<Record<number, string>>;
  private readonly timeoutMs: number;

  constructor(private readonly options: CoingeckoOptions) {
    const plan = options.plan ?? 'pro';
    this.baseUrl = (options.baseUrl ?? (plan === 'pro' ? COINGECKO_PRO_URL : COINGECKO_DEMO_URL)).replace(/\/+$/, '');
    this.headers = { [plan === 'pro' ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key']: options.apiKey };
    this.platforms = options.platforms ?? COINGECKO_PLATFORMS;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  platform(chainId: number): string | null {
    return this.platforms[chainId] ?? null;
  }

  /** USD per whole token, or null when Coingecko has no price for it. */
  async tokenUsdPrice(chainId: number, token: Address): Promise<number | null> {
    const platform = this.platform(chainId);
    if (!platform) return null;
    const address = token.toLowerCase();
    const url = `${this.baseUrl}/simple/token_price/${encodeURIComponent(platform)}?contract_addresses=${address}&vs_currencies=usd`;
    const res = await providerRequest(NAME, url, { headers: this.headers }, { timeoutMs: this.timeoutMs, fetch: this.options.fetch });
    if (res.status === 404) return null;
    expectOk(NAME, res, 'token price');
    if (!isRecord(res.body)) throw malformed(NAME, 'token price: expected an object');
    const entry = res.body[address];
    if (entry === undefined) return null;
    if (!isRecord(entry)) throw malformed(NAME, 'token price: entry is not an object');
    const usd = entry.usd;
    if (usd === undefined || usd === null) return null;
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw malformed(NAME, 'token price: usd is not a number');
    return usd > 0 ? usd : null;
  }

  /** The last `days` of USD prices ([unix ms, usd]), or null when Coingecko does not know the token. */
  async usdChart(chainId: number, token: Address, days = 1): Promise<Array<[number, number]> | null> {
    const platform = this.platform(chainId);
    if (!platform) return null;
    const url = `${this.baseUrl}/coins/${encodeURIComponent(platform)}/contract/${token.toLowerCase()}/market_chart?vs_currency=usd&days=${days}`;
    const res = await providerRequest(NAME, url, { headers: this.headers }, { timeoutMs: this.timeoutMs, fetch: this.options.fetch });
    if (res.status === 404) return null;
    expectOk(NAME, res, 'market chart');
    if (!isRecord(res.body) || !Array.isArray(res.body.prices)) throw malformed(NAME, 'market chart: expected {prices: [[ms, usd], ...]}');
    const points: Array<[number, number]> = [];
    for (const p of res.body.prices) {
      if (!Array.isArray(p) || typeof p[0] !== 'number' || typeof p[1] !== 'number') throw malformed(NAME, 'market chart: a point is not [ms, usd]');
      if (Number.isFinite(p[0]) && Number.isFinite(p[1]) && p[1] > 0) points.push([p[0], p[1]]);
    }
    return points.length > 0 ? points : null;
  }
}

/** `UsdPriceSource` backed by `/simple/token_price`. */
export class CoingeckoUsdPrice implements UsdPriceSource {
  readonly name = NAME;
  constructor(private readonly client: CoingeckoClient) {}

  lookup(query: UsdPriceQuery): Promise<number | null> {
    return this.client.tokenUsdPrice(query.chainId, query.token);
  }
}

/** Rounds to the 5-minute grid (nearest step, as the reference does) and keeps the last point of each step. */
export function toFiveMinuteSeries(points: Array<[number, number]>, fromMs: number, toMs: number): PricePoint[] {
  const byStep = new Map<number, number>();
  for (const [t, price] of [...points].sort((a, b) => a[0] - b[0])) {
    if (t < fromMs - COINGECKO_STEP_MS || t > toMs + COINGECKO_STEP_MS) continue;
    byStep.set(Math.round(t / COINGECKO_STEP_MS) * COINGECKO_STEP_MS, price);
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([t, price]) => ({ t, price }));
}

/** `MarketSamplesSource` backed by `market_chart` (both tokens in USD). */
export class CoingeckoMarketSamples implements MarketSamplesSource {
  readonly name = NAME;
  constructor(private readonly client: CoingeckoClient) {}

  async lookup(query: MarketSamplesQuery): Promise<MarketSamples | null> {
    if (!this.client.platform(query.chainId)) return null;
    const days = Math.max(1, Math.ceil((query.toMs - query.fromMs) / 86_400_000));
    const [base, quote] = await Promise.all([this.client.usdChart(query.chainId, query.base, days), this.client.usdChart(query.chainId, query.quote, days)]);
    if (!base || !quote) return null;
    const b = toFiveMinuteSeries(base, query.fromMs, query.toMs);
    const q = toFiveMinuteSeries(quote, query.fromMs, query.toMs);
    if (b.length === 0 || q.length === 0) return null;
    return { numeraire: 'usd', stepMs: COINGECKO_STEP_MS, base: b, quote: q, route: { base: ['coingecko:usd'], quote: ['coingecko:usd'] } };
  }
}
