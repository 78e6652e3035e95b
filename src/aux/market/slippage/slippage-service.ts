/**
 * Slippage tolerance of a market on one chain (spec §4.4): the volatility of base/quote over the last 24 hours of
 * 5-minute samples (first-party indexed Syncs, else the Coingecko adapter), adjusted by the optional order
 * parameters as described in volatility.ts, clamped to 0..10 000 bps.
 *
 * The pair is read as an order selling base for quote (the SDK asks `/markets/{sellToken}-{buyToken}/...`):
 * sellAmount is in base atoms, buyAmount and the pool output in quote atoms, feeAmount in base (sell) atoms.
 *
 * Outcomes: a recommendation with its breakdown; MarketError Invalid (base = quote, amount out of range);
 * NotFound (no samples for the pair); Unavailable (no samples and a source failed).
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { DB } from '../../../db/schema.js';
import { SourcesUnavailableError } from '../../../providers/data-source.js';
import type { FallbackSource } from '../../../providers/fallback.js';
import { MarketError } from '../market-error.js';
import { PoolGraph, hopReserves } from '../pool-graph.js';
import type { MarketSamples, MarketSamplesQuery, PricePoint } from '../../../providers/ports/market.js';
import { NATIVE_PLACEHOLDER } from '../prices/usd-price-service.js';
import { exactInImpact, exactOutImpact } from './price-impact.js';
import { pairVolatility, recommendSlippage, seriesStats, type SlippageBreakdown } from './volatility.js';

export interface SlippageParams {
  orderKind?: 'buy' | 'sell';
  partiallyFillable?: boolean;
  sellAmount?: bigint;
  buyAmount?: bigint;
  expirationTimeInSeconds?: number;
  feeAmount?: bigint;
}

export interface TokenVolatilityDetails {
  tokenAddress: Address;
  /** USD per whole token when known (diagnostic only) */
  usdPrice: number | null;
  /** price in the numeraire per whole token, one point per 5 minutes */
  prices: PricePoint[];
  /** σ of the token's own series / its last price (5-minute scaling) */
  volatilityInNumeraire: number | null;
  route: string[];
}

export interface VolatilityDetails {
  chainId: number;
  numeraire: string;
  source: string;
  windowSeconds: number;
  baseToken: TokenVolatilityDetails;
  quoteToken: TokenVolatilityDetails;
  pair: {
    points: number;
    spacingSeconds: number;
    meanRatio: number;
    sigma: number;
    currentRatio: number;
    /** relative volatility of base/quote: the figure the recommendation starts from */
    volatilityInTokens: number;
  };
  adjustments: {
    orderKind: 'buy' | 'sell' | null;
    amountUsed: 'sellAmount' | 'buyAmount' | null;
    priceImpact: number;
    feeShare: number;
  } & Omit<SlippageBreakdown, 'slippageBps'>;
  slippageBps: number;
}

export interface SlippageServiceOptions {
  chainId: number;
  db: Kysely<DB>;
  wrappedNative: Address | null;
  /** tokens a trade route may pass through (lowercase) */
  hubs: readonly Address[];
  samples: FallbackSource<MarketSamplesQuery, MarketSamples>;
  /** USD price for the details, null when unknown (never throws) */
  usdPrice?: (token: Address) => Promise<number | null>;
  now?: () => number;
  /** default 24 h */
  windowMs?: number;
  /** Cache-Control max-age, seconds (spec §8: 120) */
  maxAgeSeconds?: number;
}

export class SlippageService {
  readonly maxAgeSeconds: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly options: SlippageServiceOptions) {
    this.maxAgeSeconds = options.maxAgeSeconds ?? 120;
    this.windowMs = options.windowMs ?? 86_400_000;
    this.now = options.now ?? Date.now;
  }

  private resolve(token: Address): Address {
    const t = token.toLowerCase() as Address;
    if (t === NATIVE_PLACEHOLDER) {
      if (!this.options.wrappedNative) throw new MarketError('NotFound', `chain ${this.options.chainId} has no wrapped native token`);
      return this.options.wrappedNative;
    }
    return t;
  }

  async recommend(baseToken: Address, quoteToken: Address, params: SlippageParams = {}): Promise<number> {
    return (await this.details(baseToken, quoteToken, params)).slippageBps;
  }

  /**
   * The base/quote price (quote per whole base token) over the window, one point per sample: the series the
   * recommendation is computed from. Null when there is no market data for the pair.
   */
  async priceHistory(baseToken: Address, quoteToken: Address): Promise<{ source: string; points: PricePoint[] } | null> {
    const found = await this.pairSamples(this.resolve(baseToken), this.resolve(quoteToken));
    return found ? { source: found.answer.source, points: found.volatility.ratios } : null;
  }

  /** The 24 h samples of base and quote and their ratio statistics (null: no market data for the pair). */
  private async pairSamples(base: Address, quote: Address) {
    if (base === quote) throw new MarketError('Invalid', 'quoteTokenAddress: must differ from baseTokenAddress (after mapping the native asset to its wrapped token)');
    const toMs = this.now();
    let answer;
    try {
      answer = await this.options.samples.lookupWithSource({ chainId: this.options.chainId, base, quote, fromMs: toMs - this.windowMs, toMs });
    } catch (err) {
      if (err instanceof SourcesUnavailableError) throw new MarketError('Unavailable', `market data for ${base}-${quote} is temporarily unavailable: ${err.message}`, { cause: err });
      throw err;
    }
    const volatility = answer ? pairVolatility(answer.value) : null;
    return answer && volatility ? { answer, volatility } : null;
  }

  async details(baseToken: Address, quoteToken: Address, params: SlippageParams = {}): Promise<VolatilityDetails> {
    const { chainId } = this.options;
    const base = this.resolve(baseToken);
    const quote = this.resolve(quoteToken);
    if (base === quote) throw new MarketError('Invalid', 'quoteTokenAddress: must differ from baseTokenAddress (after mapping the native asset to its wrapped token)');
    if (params.sellAmount !== undefined && params.sellAmount <= 0n) throw new MarketError('Invalid', 'sellAmount: must be greater than 0');
    if (params.buyAmount !== undefined && params.buyAmount <= 0n) throw new MarketError('Invalid', 'buyAmount: must be greater than 0');

    const found = await this.pairSamples(base, quote);
    if (!found) throw new MarketError('NotFound', `no market data for ${base}-${quote} on chain ${chainId}`);
    const { answer, volatility } = found;
    const samples = answer.value;

    // which amount applies, and its impact against current reserves
    const kind = params.orderKind ?? null;
    const amountUsed: 'sellAmount' | 'buyAmount' | null =
      kind === 'sell' ? (params.sellAmount !== undefined ? 'sellAmount' : null)
      : kind === 'buy' ? (params.buyAmount !== undefined ? 'buyAmount' : null)
      : params.sellAmount !== undefined ? 'sellAmount' : params.buyAmount !== undefined ? 'buyAmount' : null;
    const priceImpact = amountUsed ? await this.priceImpact(base, quote, amountUsed === 'sellAmount' ? { exactIn: params.sellAmount! } : { exactOut: params.buyAmount! }) : 0;
    const feeShare = params.feeAmount !== undefined && params.sellAmount !== undefined && params.sellAmount > 0n ? Number(params.feeAmount) / Number(params.sellAmount) : 0;

    const breakdown = recommendSlippage({
      volatility: volatility.relative,
      expirationTimeInSeconds: params.expirationTimeInSeconds,
      partiallyFillable: params.partiallyFillable,
      priceImpact,
      feeShare,
    });

    const usd = async (token: Address) => (this.options.usdPrice ? this.options.usdPrice(token).catch(() => null) : null);
    const [baseUsd, quoteUsd] = await Promise.all([usd(base), usd(quote)]);
    const token = (address: Address, prices: PricePoint[], usdPrice: number | null, route: string[] | undefined): TokenVolatilityDetails => ({
      tokenAddress: address,
      usdPrice,
      prices,
      volatilityInNumeraire: seriesStats(prices)?.relative ?? null,
      route: route ?? [],
    });
    const { slippageBps, ...parts } = breakdown;
    return {
      chainId,
      numeraire: samples.numeraire,
      source: answer.source,
      windowSeconds: this.windowMs / 1000,
      baseToken: token(base, samples.base, baseUsd, samples.route?.base),
      quoteToken: token(quote, samples.quote, quoteUsd, samples.route?.quote),
      pair: {
        points: volatility.points,
        spacingSeconds: volatility.spacingMs / 1000,
        meanRatio: volatility.mean,
        sigma: volatility.sigma,
        currentRatio: volatility.currentRatio,
        volatilityInTokens: volatility.relative,
      },
      adjustments: { orderKind: kind, amountUsed, priceImpact, feeShare, ...parts },
      slippageBps,
    };
  }

  /** The smallest impact over the first-party routes (direct, or through one hub); 0 when there is no route. */
  private async priceImpact(base: Address, quote: Address, amount: { exactIn: bigint } | { exactOut: bigint }): Promise<number> {
    const hubs = [...new Set([...(this.options.wrappedNative ? [this.options.wrappedNative] : []), ...this.options.hubs.map((h) => h.toLowerCase() as Address)])];
    const tokens = [base, quote, ...hubs];
    const graph = await PoolGraph.load(this.options.db, this.options.chainId, tokens, tokens);
    const routes = graph.routes(base, quote, hubs).filter((r) => r.length > 0);
    if (routes.length === 0) return 0;
    const impacts = routes.map((route) => {
      const hops = route.map((hop) => hopReserves(hop));
      return 'exactIn' in amount ? exactInImpact(amount.exactIn, hops) : exactOutImpact(amount.exactOut, hops);
    });
    return Math.min(...impacts);
  }
}
