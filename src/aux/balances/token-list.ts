/**
 * The `tokens` query of the balance routes: comma-separated addresses in any letter case (spec: checksummed and
 * lowercase forms are accepted and normalized). Entries are trimmed, empty entries skipped, duplicates removed
 * (first occurrence keeps its place), and each address is returned lowercase. Errors name the offending input.
 *
 * @example
 *   parseTokenList(' 0xA0b8…eB48, ,0xa0b8…eb48,0xEeee…EEeE', 100)  // ['0xa0b8…eb48', '0xeeee…eeee']
 */
import type { Address } from 'viem';

export class TokenListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenListError';
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Default cap on tokens per request or stream. */
export const MAX_TOKENS_PER_REQUEST = 100;

export function parseTokenList(raw: string | undefined, maxTokens: number = MAX_TOKENS_PER_REQUEST): Address[] {
  if (raw === undefined || raw.trim() === '') throw new TokenListError('tokens: at least one token address is required');
  const seen = new Set<string>();
  const tokens: Address[] = [];
  for (const part of raw.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    if (!ADDRESS.test(entry)) {
      const shown = entry.length > 60 ? `${entry.slice(0, 60)}…` : entry;
      throw new TokenListError(`tokens: invalid token address "${shown}" (expected 0x followed by 40 hex digits)`);
    }
    const lower = entry.toLowerCase();
    if (seen.has(lower)) continue;
    seen.add(lower);
    tokens.push(lower as Address);
    if (tokens.length > maxTokens) throw new TokenListError(`tokens: at most ${maxTokens} distinct token addresses per request`);
  }
  if (tokens.length === 0) throw new TokenListError('tokens: at least one token address is required');
  return tokens;
}
