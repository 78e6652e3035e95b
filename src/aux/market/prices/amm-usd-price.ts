/**
 * First-party USD prices from on-chain Uniswap-V2 pools: the token's native price (native atoms per token atom,
 * from `AmmNativePrice`: the token/wrapped-native pool, else through one connector such as the USD stablecoin —
 * which covers a token only paired with the stablecoin) divided by the native price of the chain's USD
 * stablecoin, normalised by decimals:
 *
 *   usd(token) = nativePrice(token) · 10^decimals(token) ÷ (nativePrice(stable) · 10^decimals(stable))
 *
 * The first stablecoin of the chain's list that has a native price is the $1 reference (it answers exactly 1);
 * other stablecoins are priced against it through the pools like any token. Null when the token has no pool
 * route or is not an ERC-20; an RPC failure rejects (never "no price").
 *
 * @example
 *   const amm = new AmmUsdPrice({ nativePrices, usdStables: network.usdStables, decimals: (t) => reader.tokenMetadata(t).then((m) => m?.decimals ?? null) });
 *   await amm.lookup({ chainId: 31337, token: weth }); // ≈ 3000
 */
import type { Address } from 'viem';
import type { NativePriceSource } from '../../../orderbook/pricing/trade-estimator.js';
import type { UsdPriceQuery, UsdPriceSource } from '../../../providers/ports/market.js';

export interface AmmUsdPriceOptions {
  /** native prices from pool reserves (share the order book's AmmNativePrice to share its cache) */
  nativePrices: NativePriceSource;
  /** the chain's USD stablecoins, the reference first (lowercase) */
  usdStables: readonly Address[];
  /** decimals of a token, null when it is not an ERC-20 */
  decimals: (token: Address) => Promise<number | null>;
  name?: string;
}

export class AmmUsdPrice implements UsdPriceSource {
  readonly name: string;
  constructor(private readonly options: AmmUsdPriceOptions) {
    this.name = options.name ?? 'amm';
  }

  async lookup(query: UsdPriceQuery): Promise<number | null> {
    const token = query.token.toLowerCase() as Address;
    const stables = this.options.usdStables.map((s) => s.toLowerCase() as Address);
    if (stables.length === 0) return null;
    if (token === stables[0]) return 1;
    const [native, decimals] = await Promise.all([this.options.nativePrices.nativePrice(token), this.options.decimals(token)]);
    if (native === null || decimals === null || !(native > 0)) return null;
    for (const stable of stables) {
      if (stable === token) return 1; // the first stablecoin with a price is the reference
      const [stableNative, stableDecimals] = await Promise.all([this.options.nativePrices.nativePrice(stable), this.options.decimals(stable)]);
      if (stableNative === null || stableDecimals === null || !(stableNative > 0)) continue;
      const usd = (native * 10 ** decimals) / (stableNative * 10 ** stableDecimals);
      return Number.isFinite(usd) && usd > 0 ? usd : null;
    }
    return null;
  }
}
