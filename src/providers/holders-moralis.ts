/**
 * Top holders from Moralis (reference auxiliary.md §4):
 *
 *   GET https://deep-index.moralis.io/api/v2.2/erc20/{token}/owners?chain={eth|gnosis|...}&order=DESC&limit=100
 *   header X-API-Key  →  { result: [{ owner_address, balance: "<atoms>", ... }], cursor, page, page_size }
 *
 * Unlike upstream (limit=2, status unchecked → TypeError → 500), the status is checked: 404 → null; other
 * non-2xx, timeouts and bodies without a `result` array reject, so the next holder source is asked.
 */
import type { HoldersQuery, TokenHolder, TokenHolderSource } from './ports/market.js';
import { MAX_HOLDERS } from './ports/market.js';
import { rankHolders } from './rank-holders.js';
import { expectOk, isRecord, malformed, parseAddress, parseAtoms, providerRequest, type FetchLike } from './provider-http.js';

export const MORALIS_URL = 'https://deep-index.moralis.io/api/v2.2';

export const MORALIS_CHAINS: Readonly<Record<number, string>> = {
  1: 'eth',
  11155111: 'sepolia',
  100: 'gnosis',
  42161: 'arbitrum',
  137: 'polygon',
  43114: 'avalanche',
  8453: 'base',
  56: 'bsc',
  59144: 'linea',
};

export interface MoralisOptions {
  apiKey: string;
  baseUrl?: string;
  chains?: Readonly<Record<number, string>>;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'moralis';

export class MoralisTokenHolders implements TokenHolderSource {
  readonly name = NAME;
  private readonly baseUrl: string;

  constructor(private readonly options: MoralisOptions) {
    this.baseUrl = (options.baseUrl ?? MORALIS_URL).replace(/\/+$/, '');
  }

  async lookup(query: HoldersQuery): Promise<TokenHolder[] | null> {
    const chain = (this.options.chains ?? MORALIS_CHAINS)[query.chainId];
    if (!chain) return null;
    const url = `${this.baseUrl}/erc20/${query.token.toLowerCase()}/owners?chain=${chain}&order=DESC&limit=${MAX_HOLDERS}`;
    const res = await providerRequest(NAME, url, { headers: { 'X-API-Key': this.options.apiKey } }, { timeoutMs: this.options.timeoutMs ?? 5_000, fetch: this.options.fetch });
    if (res.status === 404) return null;
    expectOk(NAME, res, 'token owners');
    if (!isRecord(res.body) || !Array.isArray(res.body.result)) throw malformed(NAME, 'token owners: expected {result: [...]}');
    const holders: TokenHolder[] = [];
    for (const row of res.body.result) {
      if (!isRecord(row)) throw malformed(NAME, 'token owners: a row is not an object');
      const address = parseAddress(row.owner_address);
      const balance = parseAtoms(row.balance);
      if (!address || balance === null) throw malformed(NAME, 'token owners: a row has no owner_address or balance');
      if (balance > 0n) holders.push({ address, balance });
    }
    return rankHolders(holders);
  }
}
