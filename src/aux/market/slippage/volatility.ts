/**
 * The slippage recommendation as pure functions (reference auxiliary.md §3.5, with the spec's 0..10000 clamp).
 *
 * Volatility of the pair:
 *   1. join the base and quote series on their (5-minute) sample times: ratio_i = base_i / quote_i
 *      (quote per base); fewer than 2 joined points → no market data;
 *   2. σ = population standard deviation of the ratios; Δt = (t_last − t_first) / (N − 1);
 *      σ₅ = σ · √(5 min / Δt)  (≈ σ for 5-minute data);
 *   3. relative volatility v = σ₅ / current ratio (the last joined ratio).
 *   Without query parameters: slippageBps = ceil(v · 10 000), clamped to 0..10 000.
 *
 * The optional query parameters change the answer as follows (all documented on the route):
 *   - expirationTimeInSeconds T: the volatility part scales like a random walk with the time the order may wait,
 *     v · √(clamp(T, 300, 86 400) / 300): an order valid for ≤ 5 minutes gets the plain figure, one valid for
 *     an hour √12 ≈ 3.5 times it, capped at a day (×17);
 *   - sellAmount (sell orders, base atoms) / buyAmount (buy orders, quote atoms): the amount's price impact
 *     against the current pool reserves (best first-party route, fee excluded) is added: a large order is
 *     re-priced against reserves that other trades keep moving, so it needs room for its own impact;
 *   - feeAmount (sell-token atoms, with sellAmount): half the fee's share of the sell amount is added (the
 *     network fee can rise ~50 % before execution, and eats into a small order — the SDK's rule);
 *   - partiallyFillable = true: the volatility and impact parts are halved (the order can fill piecewise while
 *     the price is in range; a miss delays it rather than failing it);
 *   - orderKind only chooses which amount applies (sell: sellAmount, buy: buyAmount; unset: whichever is given,
 *     sellAmount first).
 *   slippageBps = clamp(ceil((v·h·p + impact·p + fee share / 2) · 10 000), 0, 10 000).
 */
import type { MarketSamples, PricePoint } from '../../../providers/ports/market.js';

export const REFERENCE_STEP_MS = 300_000;
export const MAX_SLIPPAGE_BPS = 10_000;
/** horizon bounds of the expiration scaling, seconds */
export const MIN_HORIZON_S = 300;
export const MAX_HORIZON_S = 86_400;
/** the share of the fee added (the fee can rise by half before execution) */
export const FEE_MULTIPLIER = 0.5;
export const PARTIALLY_FILLABLE_FACTOR = 0.5;

export interface SeriesStats {
  points: number;
  mean: number;
  /** population standard deviation */
  sigma: number;
  last: number;
  /** σ scaled to 5-minute spacing, relative to the last value */
  relative: number;
}

export interface PairVolatility {
  /** joined samples */
  points: number;
  /** average spacing of the joined samples, ms */
  spacingMs: number;
  /** mean and population σ of base/quote */
  mean: number;
  sigma: number;
  /** σ · √(5 min / spacing) */
  scaledSigma: number;
  /** last joined base/quote (quote per base) */
  currentRatio: number;
  /** scaledSigma / currentRatio */
  relative: number;
  /** the joined ratio series */
  ratios: PricePoint[];
}

function meanAndSigma(values: readonly number[]): { mean: number; sigma: number } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean, sigma: Math.sqrt(variance) };
}

const usable = (p: PricePoint) => Number.isFinite(p.t) && Number.isFinite(p.price) && p.price > 0;

/** The volatility of one series (for diagnostics), or null with fewer than 2 points. */
export function seriesStats(points: readonly PricePoint[]): SeriesStats | null {
  const sorted = points.filter(usable).sort((a, b) => a.t - b.t);
  if (sorted.length < 2) return null;
  const { mean, sigma } = meanAndSigma(sorted.map((p) => p.price));
  const spacing = (sorted[sorted.length - 1]!.t - sorted[0]!.t) / (sorted.length - 1);
  const last = sorted[sorted.length - 1]!.price;
  const scaled = spacing > 0 ? sigma * Math.sqrt(REFERENCE_STEP_MS / spacing) : sigma;
  return { points: sorted.length, mean, sigma, last, relative: scaled / last };
}

/** Steps 1–3 above; null when fewer than 2 sample times are shared by both series. */
export function pairVolatility(samples: Pick<MarketSamples, 'base' | 'quote'>): PairVolatility | null {
  const quote = new Map<number, number>();
  for (const p of samples.quote) if (usable(p)) quote.set(p.t, p.price);
  const ratios: PricePoint[] = [];
  for (const p of samples.base) {
    const q = quote.get(p.t);
    if (q !== undefined && usable(p)) ratios.push({ t: p.t, price: p.price / q });
  }
  ratios.sort((a, b) => a.t - b.t);
  if (ratios.length < 2) return null;
  const { mean, sigma } = meanAndSigma(ratios.map((r) => r.price));
  const spacingMs = (ratios[ratios.length - 1]!.t - ratios[0]!.t) / (ratios.length - 1);
  const scaledSigma = spacingMs > 0 ? sigma * Math.sqrt(REFERENCE_STEP_MS / spacingMs) : sigma;
  const currentRatio = ratios[ratios.length - 1]!.price;
  return { points: ratios.length, spacingMs, mean, sigma, scaledSigma, currentRatio, relative: scaledSigma / currentRatio, ratios };
}

export interface SlippageInputs {
  /** relative volatility v (pairVolatility().relative) */
  volatility: number;
  expirationTimeInSeconds?: number;
  partiallyFillable?: boolean;
  /** price impact of the amount, 0..1 (0 when no amount is given) */
  priceImpact?: number;
  /** feeAmount / sellAmount (0 when not given) */
  feeShare?: number;
}

export interface SlippageBreakdown {
  slippageBps: number;
  /** each part in bps before rounding */
  volatilityBps: number;
  horizonFactor: number;
  partialFactor: number;
  priceImpactBps: number;
  feeBps: number;
}

/** √(clamp(T, 5 min, 1 day) / 5 min); 1 without an expiration. */
export function horizonFactor(expirationTimeInSeconds?: number): number {
  if (expirationTimeInSeconds === undefined) return 1;
  const horizon = Math.min(MAX_HORIZON_S, Math.max(MIN_HORIZON_S, expirationTimeInSeconds));
  return Math.sqrt(horizon / MIN_HORIZON_S);
}

export function recommendSlippage(inputs: SlippageInputs): SlippageBreakdown {
  const h = horizonFactor(inputs.expirationTimeInSeconds);
  const p = inputs.partiallyFillable ? PARTIALLY_FILLABLE_FACTOR : 1;
  const volatilityBps = Math.max(0, inputs.volatility) * 10_000;
  const priceImpactBps = Math.max(0, inputs.priceImpact ?? 0) * 10_000;
  const feeBps = Math.max(0, inputs.feeShare ?? 0) * FEE_MULTIPLIER * 10_000;
  const raw = volatilityBps * h * p + priceImpactBps * p + feeBps;
  // 1e-9 absorbs float noise (35.000000000000004 must stay 35)
  const bps = Number.isFinite(raw) ? Math.ceil(raw - 1e-9) : MAX_SLIPPAGE_BPS;
  return {
    slippageBps: Math.min(MAX_SLIPPAGE_BPS, Math.max(0, bps)),
    volatilityBps,
    horizonFactor: h,
    partialFactor: p,
    priceImpactBps,
    feeBps,
  };
}
