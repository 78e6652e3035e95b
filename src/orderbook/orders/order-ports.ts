/** What the order services need from the chain and from the quoter, as interfaces (the app wires real ones). */
import type { Address, Hex } from 'viem';
import type { AppDataHook } from '../../protocol/index.js';
import type { StoredQuote } from '../quotes/stored-quote.js';

export interface OrderChainReads {
  /**
   * ERC-20 balance of the owner and its allowance to the vault relayer, read together; the allowance counts what
   * the order's pre-hooks would grant (an EIP-2612 permit to the vault relayer that simulates successfully)
   */
  balanceAndAllowance(owner: Address, token: Address, preHooks?: readonly AppDataHook[]): Promise<{ balance: bigint; allowance: bigint }>;
  /** EIP-1271 `isValidSignature(digest, signature)` on the owner contract returns the magic value */
  isValidSignature1271(owner: Address, digest: Hex, signature: Hex): Promise<boolean>;
}

export interface QuoteForOrderRequest {
  quoteId: number | null;
  sellToken: Address;
  buyToken: Address;
  kind: 'sell' | 'buy';
  sellAmount: bigint;
  buyAmount: bigint;
  feeAmount: bigint;
  from: Address;
  signingScheme: 'eip712' | 'ethsign' | 'presign' | 'eip1271';
  appData: Hex;
  validTo: number;
}

export interface OrderQuoter {
  /** the quote given by id when it matches, else a stored matching one, else a fresh stored one; throws OrderBookError */
  quoteForOrder(request: QuoteForOrderRequest): Promise<StoredQuote>;
}

export interface OrderPolicy {
  bannedAddresses: Set<string>;
  deniedTokens: Set<string>;
  /** open out-of-market limit orders allowed per owner (upstream: 10) */
  maxLimitOrdersPerOwner: number;
  /** seconds */
  minValidity: number;
  maxMarketValidity: number;
  maxLimitValidity: number;
  /** current time, unix seconds (injectable for tests) */
  now(): number;
}

export const DEFAULT_ORDER_POLICY: Omit<OrderPolicy, 'bannedAddresses' | 'deniedTokens'> = {
  maxLimitOrdersPerOwner: 10,
  minValidity: 60,
  maxMarketValidity: 3 * 3600,
  maxLimitValidity: 365 * 24 * 3600,
  now: () => Math.floor(Date.now() / 1000),
};
