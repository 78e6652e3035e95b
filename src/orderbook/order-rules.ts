/**
 * The order-level rules quotes and orders share (reference orderbook.md §5 step 7 and §3.1), each defined once:
 * who may trade (deny list), which token pairs are trades, which tokens are served, and how long an order may be
 * valid. QuoteService and OrderService call them; each throws the spec's `OrderBookError`.
 *
 * @example
 *   checkNotDenyListed(policy.bannedAddresses, [owner, receiver]);
 *   checkTokenPair(sellToken, buyToken, wrappedNative);
 *   checkTokensServed(policy.deniedTokens, sellToken, buyToken);
 *   checkValidTo(validTo, now, { min: 60, max: 3 * 3600, refuseExpired: false });
 */
import type { Address } from 'viem';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import { OrderBookError } from '../protocol/order-book-error.js';

/** `Forbidden` when the owner (or `from`) or the receiver is deny-listed. */
export function checkNotDenyListed(bannedAddresses: ReadonlySet<string>, parties: ReadonlyArray<Address | null>): void {
  if (parties.some((party) => party !== null && bannedAddresses.has(party))) {
    throw new OrderBookError('Forbidden', 'Forbidden, your account is deny-listed');
  }
}

/**
 * A pair is a trade: not the same token twice (`SameBuyAndSellToken`, also for wrapped native → native, which is
 * an unwrap), and the native token is never sold directly (`InvalidNativeSellToken`). Addresses are lowercase.
 */
export function checkTokenPair(sellToken: Address, buyToken: Address, wrappedNative: Address | null | undefined): void {
  if (sellToken === buyToken) throw new OrderBookError('SameBuyAndSellToken', 'sellToken and buyToken are the same');
  if (buyToken === BUY_ETH_ADDRESS && wrappedNative && sellToken === wrappedNative.toLowerCase()) {
    throw new OrderBookError('SameBuyAndSellToken', 'selling the wrapped native token for the native token is an unwrap, not a trade');
  }
  if (sellToken === BUY_ETH_ADDRESS) throw new OrderBookError('InvalidNativeSellToken', 'the native token cannot be sold directly; wrap it first');
}

/** `UnsupportedToken` when either token is deny-listed. */
export function checkTokensServed(deniedTokens: ReadonlySet<string>, sellToken: Address, buyToken: Address): void {
  for (const token of [sellToken, buyToken]) {
    if (deniedTokens.has(token)) throw new OrderBookError('UnsupportedToken', `token ${token} is deny listed`);
  }
}

export interface ValidityBounds {
  /** seconds from now the order must at least stay valid (`InsufficientValidTo`) */
  min: number;
  /** seconds from now it may at most stay valid (`ExcessiveValidTo`); null: unbounded */
  max: number | null;
  /** an order already expired is `OrderExpired` (orders) rather than `InsufficientValidTo` (quotes) */
  refuseExpired: boolean;
  /** what the upper bound applies to, for the message (e.g. 'a limit order') */
  maxAppliesTo?: string;
}

/** `validTo` (unix seconds) within the bounds, at `now`. */
export function checkValidTo(validTo: number, now: number, bounds: ValidityBounds): void {
  if (bounds.refuseExpired && validTo < now) throw new OrderBookError('OrderExpired', `validTo ${validTo} is in the past (now ${now}; validTo is in seconds)`);
  if (validTo < now + bounds.min) throw new OrderBookError('InsufficientValidTo', `validTo must be at least ${bounds.min} s in the future`);
  if (bounds.max !== null && validTo > now + bounds.max) {
    throw new OrderBookError('ExcessiveValidTo', `validTo must be at most ${bounds.max} s in the future${bounds.maxAppliesTo ? ` for ${bounds.maxAppliesTo}` : ''}`);
  }
}
