/**
 * The balance entry of the wire (spec §2 "Balance entry"), the token metadata it carries, and how the requested
 * tokens are resolved: the native asset (0xEeee…EEeE) from the chain's native currency, ERC-20s from the
 * chain reader's metadata cache. An address that does not answer `decimals()` is not an ERC-20 token: it is
 * left out of the array and reported separately (`omitted`), never answered with a made-up entry.
 *
 * @example
 *   const { known, omitted } = await resolveTokens(reader, { symbol: 'ETH', name: 'Ether', decimals: 18 }, tokens);
 *   const entries = balanceEntries(known, (token) => values.get(token));
 */
import { Type, type Static } from '@sinclair/typebox';
import { maxUint256, type Address } from 'viem';
import type { TokenMetadata } from '../../chain/reader.js';

/** The placeholder address of the chain's native asset, as used on the wire (lowercase). */
export const NATIVE_TOKEN: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

export interface NativeCurrency {
  symbol: string;
  name: string;
  decimals: number;
}

export const TokenInfoSchema = Type.Object({
  address: Type.String({ description: 'token contract address (lowercase); 0xeeee…eeee for the native asset' }),
  decimals: Type.Integer({ minimum: 0, maximum: 255 }),
  symbol: Type.String({ description: 'empty when the contract has no readable symbol()' }),
  name: Type.String({ description: 'empty when the contract has no readable name()' }),
});
export type TokenInfo = Static<typeof TokenInfoSchema>;

export const BalanceEntrySchema = Type.Object({
  balance: Type.String({ pattern: '^[0-9]+$', description: 'balance in base units (decimal)' }),
  allowance: Type.String({
    pattern: '^[0-9]+$',
    description: 'allowance granted to the vault relayer, base units (decimal); max uint256 for the native asset',
  }),
  token: TokenInfoSchema,
});
export type BalanceEntry = Static<typeof BalanceEntrySchema>;

export interface TokenValues {
  /** null when `balanceOf` failed (the entry is left out) */
  balance: bigint | null;
  /** null when `allowance` failed (reported as 0: nothing usable is approved) */
  allowance: bigint | null;
}

export interface ResolvedTokens {
  /** in request order */
  known: TokenInfo[];
  /** addresses that are not ERC-20 tokens on this chain (no contract, or no readable decimals()) */
  omitted: Address[];
}

export interface MetadataSource {
  tokensMetadata(tokens: Address[]): Promise<Array<TokenMetadata | null>>;
}

/** Rejects on a transport failure (never mistaken for "not a token"). */
export async function resolveTokens(source: MetadataSource, native: NativeCurrency, tokens: readonly Address[]): Promise<ResolvedTokens> {
  const erc20 = tokens.filter((t) => t !== NATIVE_TOKEN);
  const metadata = erc20.length > 0 ? await source.tokensMetadata(erc20) : [];
  const byAddress = new Map<Address, TokenMetadata | null>(erc20.map((t, i) => [t, metadata[i]]));
  const known: TokenInfo[] = [];
  const omitted: Address[] = [];
  for (const token of tokens) {
    if (token === NATIVE_TOKEN) {
      known.push({ address: NATIVE_TOKEN, decimals: native.decimals, symbol: native.symbol, name: native.name });
      continue;
    }
    const m = byAddress.get(token);
    if (!m) omitted.push(token);
    else known.push({ address: token, decimals: m.decimals, symbol: m.symbol ?? '', name: m.name ?? '' });
  }
  return { known, omitted };
}

/** Entries for `tokens` in their order; tokens without a readable balance are left out. */
export function balanceEntries(tokens: readonly TokenInfo[], valueOf: (token: Address) => TokenValues | undefined): BalanceEntry[] {
  const entries: BalanceEntry[] = [];
  for (const token of tokens) {
    const v = valueOf(token.address as Address);
    if (!v || v.balance === null) continue;
    const allowance = token.address === NATIVE_TOKEN ? maxUint256 : (v.allowance ?? 0n);
    entries.push({ balance: v.balance.toString(), allowance: allowance.toString(), token });
  }
  return entries;
}
