/**
 * USD prices from a CoW-compatible order book's native-price endpoint (reference auxiliary.md §3.1, §4):
 *
 *   GET {baseUrl}/api/v1/token/{token}/native_price  →  { price }   native atoms per token atom
 *
 * USD per whole token = price(token) × 10^decimals(token) ÷ 10^nativeDecimals × (USD per whole native unit).
 * By default the native asset's USD price comes from the same order book's price of the chain's USD stablecoin
 * (taken as $1): USD per native = 10^nativeDecimals ÷ (price(stable) × 10^decimals(stable)) — which makes the
 * whole formula the upstream one, price(token)·10^dt ÷ (price(stable)·10^ds). Another native-USD source can be
 * given instead.
 *
 * Outcomes: 404 and `400 {errorType: "UnsupportedToken" | "NoLiquidity"}` → null (no price); anything else
 * non-2xx, timeouts and malformed bodies reject.
 *
 * @example
 *   new OrderBookUsdPrice({ baseUrl: 'https://api.cow.fi/mainnet', usdStable: USDC, tokenDecimals: (t) => reader.tokenMetadata(t).then((m) => m?.decimals ?? null) })
 */
import type { Address } from 'viem';
import type { UsdPriceQuery, UsdPriceSource } from './ports/market.js';
import { expectOk, isRecord, malformed, providerRequest, type FetchLike } from './provider-http.js';

export interface OrderBookUsdPriceOptions {
  /** base URL of one network of the order book, e.g. https://api.cow.fi/mainnet */
  baseUrl: string;
  /** the chain's USD stablecoin, priced at $1 (default source of the native asset's USD price) */
  usdStable: Address | null;
  /** decimals of a token (null: not an ERC-20) */
  tokenDecimals: (token: Address) => Promise<number | null>;
  nativeDecimals?: number;
  /** USD per whole native unit; default: from this order book's price of `usdStable` */
  nativeUsdPrice?: () => Promise<number | null>;
  timeoutMs?: number;
  fetch?: FetchLike;
  name?: string;
}

const NO_PRICE_ERRORS = new Set(['UnsupportedToken', 'NoLiquidity', 'PriceNotFound']);

export class OrderBookUsdPrice implements UsdPriceSource {
  readonly name: string;
  private readonly baseUrl: string;

  constructor(private readonly options: OrderBookUsdPriceOptions) {
    this.name = options.name ?? 'orderbook';
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** native atoms per token atom, or null when the order book has no price */
  async nativePrice(token: Address): Promise<number | null> {
    const url = `${this.baseUrl}/api/v1/token/${token.toLowerCase()}/native_price`;
    const res = await providerRequest(this.name, url, {}, { timeoutMs: this.options.timeoutMs ?? 5_000, fetch: this.options.fetch });
    if (res.status === 404) return null;
    if (res.status === 400 && isRecord(res.body) && typeof res.body.errorType === 'string' && NO_PRICE_ERRORS.has(res.body.errorType)) return null;
    expectOk(this.name, res, 'native price');
    if (!isRecord(res.body)) throw malformed(this.name, 'native price: expected {price}');
    const price = res.body.price;
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) throw malformed(this.name, 'native price: price is not a number');
    return price > 0 ? price : null;
  }

  private async nativeUsd(): Promise<number | null> {
    if (this.options.nativeUsdPrice) return this.options.nativeUsdPrice();
    const stable = this.options.usdStable;
    if (!stable) return null;
    const [price, decimals] = await Promise.all([this.nativePrice(stable), this.options.tokenDecimals(stable)]);
    if (price === null || decimals === null) return null;
    return 10 ** (this.options.nativeDecimals ?? 18) / (price * 10 ** decimals);
  }

  async lookup(query: UsdPriceQuery): Promise<number | null> {
    const [price, decimals, nativeUsd] = await Promise.all([this.nativePrice(query.token), this.options.tokenDecimals(query.token), this.nativeUsd()]);
    if (price === null || decimals === null || nativeUsd === null) return null;
    const usd = ((price * 10 ** decimals) / 10 ** (this.options.nativeDecimals ?? 18)) * nativeUsd;
    return Number.isFinite(usd) && usd > 0 ? usd : null;
  }
}
