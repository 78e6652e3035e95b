/**
 * USD price of a token on one chain (spec §4.1 usdPrice): the native asset ("-" or 0xEeee…EEeE) is priced as
 * the wrapped native token; an address that is not an ERC-20 on the chain is "not found" at once (no provider is
 * asked: upstream #251); then the sources are asked in order (first-party pools, then the external adapters),
 * each behind its own cache.
 *
 * Outcomes: a number; MarketError NotFound (no source has a price); MarketError Unavailable (no price and at
 * least one source failed — a transient state, never reported or cached as "no price", upstream #254).
 */
import type { Address } from 'viem';
import { SourcesUnavailableError } from '../../../providers/data-source.js';
import type { FallbackSource } from '../../../providers/fallback.js';
import { MarketError } from '../market-error.js';
import type { UsdPriceQuery } from '../../../providers/ports/market.js';

/** CoW Protocol's placeholder for the native asset. */
export const NATIVE_PLACEHOLDER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' as Address;

export type TokenRef = Address | 'native';

export interface UsdPriceServiceOptions {
  chainId: number;
  wrappedNative: Address | null;
  sources: FallbackSource<UsdPriceQuery, number>;
  /** true when the address is an ERC-20 on the chain (rejects on RPC failure) */
  isToken: (token: Address) => Promise<boolean>;
  /** how long answers are cached (server and Cache-Control), seconds */
  maxAgeSeconds: number;
}

export class UsdPriceService {
  readonly maxAgeSeconds: number;
  constructor(private readonly options: UsdPriceServiceOptions) {
    this.maxAgeSeconds = options.maxAgeSeconds;
  }

  /** the ERC-20 to price for a token reference (the wrapped native token for the native asset), or null */
  resolve(token: TokenRef): Address | null {
    if (token === 'native' || token.toLowerCase() === NATIVE_PLACEHOLDER) return this.options.wrappedNative;
    return token.toLowerCase() as Address;
  }

  /** USD per whole token; throws MarketError NotFound / Unavailable. */
  async usdPrice(token: TokenRef): Promise<number> {
    const answer = await this.usdPriceWithSource(token);
    return answer.price;
  }

  async usdPriceWithSource(token: TokenRef): Promise<{ price: number; source: string }> {
    const { chainId } = this.options;
    const address = this.resolve(token);
    if (!address) throw new MarketError('NotFound', `chain ${chainId} has no wrapped native token to price the native asset with`);
    let isToken: boolean;
    try {
      isToken = await this.options.isToken(address);
    } catch (err) {
      throw new MarketError('Unavailable', `could not read token ${address} on chain ${chainId}; try again`, { cause: err });
    }
    if (!isToken) throw new MarketError('NotFound', `${address} is not an ERC-20 token on chain ${chainId}`);
    let answer;
    try {
      answer = await this.options.sources.lookupWithSource({ chainId, token: address });
    } catch (err) {
      if (err instanceof SourcesUnavailableError) throw new MarketError('Unavailable', `price of ${address} is temporarily unavailable: ${err.message}`, { cause: err });
      throw err;
    }
    if (!answer) throw new MarketError('NotFound', `no USD price for ${address} on chain ${chainId}`);
    return { price: answer.value, source: answer.source };
  }

  /** USD price or null when there is none; still throws MarketError Unavailable on failures. */
  async usdPriceOrNull(token: TokenRef): Promise<number | null> {
    try {
      return await this.usdPrice(token);
    } catch (err) {
      if (err instanceof MarketError && err.kind === 'NotFound') return null;
      throw err;
    }
  }
}
