/**
 * Price estimation from another CoW-compatible order book (EXTERNAL_QUOTE_URL, e.g. https://host/mainnet):
 * its POST /api/v1/quote with `priceQuality: fast`. A refusal for lack of liquidity is NoLiquidity; anything
 * else (timeout, 5xx, junk) is a provider failure, which the combinator below treats as "no answer".
 */
import type { Address } from 'viem';
import { OrderBookError } from '../../protocol/order-book-error.js';
import type { TradeEstimate, TradeEstimateRequest, TradeEstimator } from './trade-estimator.js';

export class ProviderUnavailableError extends Error {
  constructor(readonly provider: string, message: string) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderUnavailableError';
  }
}

export interface ExternalOrderBookEstimatorOptions {
  baseUrl: string;
  timeoutMs: number;
  /** the `from` sent with quotes (any address with no special status; the settlement contract by default) */
  from: Address;
  fetch?: typeof fetch;
}

export class ExternalOrderBookEstimator implements TradeEstimator {
  readonly name = 'external-orderbook';
  constructor(private readonly options: ExternalOrderBookEstimatorOptions) {}

  async estimate(request: TradeEstimateRequest): Promise<TradeEstimate> {
    const body = {
      sellToken: request.sellToken,
      buyToken: request.buyToken,
      from: this.options.from,
      kind: request.kind,
      priceQuality: 'fast',
      ...(request.kind === 'sell' ? { sellAmountAfterFee: request.amount.toString() } : { buyAmountAfterFee: request.amount.toString() }),
    };
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(`${this.options.baseUrl.replace(/\/$/, '')}/api/v1/quote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      throw new ProviderUnavailableError(this.name, (err as Error).message);
    }
    const text = await res.text().catch(() => '');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProviderUnavailableError(this.name, `answered ${res.status} with a body that is not JSON`);
    }
    if (res.status === 404 || (res.status === 400 && ['NoLiquidity', 'InsufficientLiquidity', 'UnsupportedToken'].includes(json?.errorType))) {
      throw new OrderBookError('NoLiquidity', `no liquidity at the external estimator (${json?.errorType ?? res.status})`);
    }
    if (res.status !== 200) throw new ProviderUnavailableError(this.name, `answered ${res.status} ${json?.errorType ?? ''}`);
    const q = json?.quote;
    const out = request.kind === 'sell' ? q?.buyAmount : q?.sellAmount;
    if (typeof out !== 'string' || !/^[0-9]+$/.test(out)) throw new ProviderUnavailableError(this.name, 'quote without a decimal amount');
    const gas = typeof q.gasAmount === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(q.gasAmount) ? BigInt(q.gasAmount.split('.')[0]) : 150_000n;
    return { outAmount: BigInt(out), gas, solver: this.name, verified: Boolean(json.verified) };
  }
}

/**
 * Asks every estimator at once and keeps the best answer (most bought for sells, least sold for buys).
 * An estimator that fails never aborts the others; NoLiquidity only when nobody has a route, and a failure
 * is reported only when every estimator failed.
 */
export class BestOfEstimators implements TradeEstimator {
  readonly name = 'best-of';
  constructor(private readonly estimators: TradeEstimator[], private readonly onProviderError?: (err: unknown) => void) {}

  async estimate(request: TradeEstimateRequest): Promise<TradeEstimate> {
    const results = await Promise.allSettled(this.estimators.map((e) => e.estimate(request)));
    let best: TradeEstimate | null = null;
    let noLiquidity: unknown = null;
    let failure: unknown = null;
    for (const r of results) {
      if (r.status === 'fulfilled') {
        if (!best || (request.kind === 'sell' ? r.value.outAmount > best.outAmount : r.value.outAmount < best.outAmount)) best = r.value;
      } else if (r.reason instanceof OrderBookError && r.reason.errorType === 'NoLiquidity') {
        noLiquidity ??= r.reason;
      } else {
        failure ??= r.reason;
        this.onProviderError?.(r.reason);
      }
    }
    if (best) return best;
    if (noLiquidity) throw noLiquidity;
    throw failure;
  }
}
