/**
 * Top holders from GoldRush (Covalent; reference auxiliary.md §4):
 *
 *   GET https://api.covalenthq.com/v1/{chain name}/tokens/{token}/token_holders_v2/?page-size=100
 *   header Authorization: Bearer {key}
 *   → { data: { items: [{ address, balance: "<atoms>", ... }], pagination }, error: false, error_message, error_code }
 *
 * 404 → null; `error: true`, other non-2xx and timeouts reject. Items are sorted here (largest first).
 */
import type { HoldersQuery, TokenHolder, TokenHolderSource } from './ports/market.js';
import { MAX_HOLDERS } from './ports/market.js';
import { rankHolders } from './rank-holders.js';
import { expectOk, isRecord, malformed, parseAddress, parseAtoms, providerRequest, type FetchLike } from './provider-http.js';

export const GOLDRUSH_URL = 'https://api.covalenthq.com/v1';

export const GOLDRUSH_CHAINS: Readonly<Record<number, string>> = {
  1: 'eth-mainnet',
  11155111: 'eth-sepolia',
  100: 'gnosis-mainnet',
  42161: 'arbitrum-mainnet',
  8453: 'base-mainnet',
  137: 'matic-mainnet',
  43114: 'avalanche-mainnet',
  56: 'bsc-mainnet',
  59144: 'linea-mainnet',
};

export interface GoldRushOptions {
  apiKey: string;
  baseUrl?: string;
  chains?: Readonly<Record<number, string>>;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'goldrush';

export class GoldRushTokenHolders implements TokenHolderSource {
  readonly name = NAME;
  private readonly baseUrl: string;

  constructor(private readonly options: GoldRushOptions) {
    this.baseUrl = (options.baseUrl ?? GOLDRUSH_URL).replace(/\/+$/, '');
  }

  async lookup(query: HoldersQuery): Promise<TokenHolder[] | null> {
    const chain = (this.options.chains ?? GOLDRUSH_CHAINS)[query.chainId];
    if (!chain) return null;
    const url = `${this.baseUrl}/${chain}/tokens/${query.token.toLowerCase()}/token_holders_v2/?page-size=${MAX_HOLDERS}`;
    const res = await providerRequest(NAME, url, { headers: { authorization: `Bearer ${this.options.apiKey}` } }, { timeoutMs: this.options.timeoutMs ?? 5_000, fetch: this.options.fetch });
    if (res.status === 404) return null;
    expectOk(NAME, res, 'token holders');
    const body = res.body;
    if (!isRecord(body)) throw malformed(NAME, 'token holders: expected an object');
    if (body.error === true) throw malformed(NAME, `token holders: error ${String(body.error_code ?? '')}`.trim());
    if (!isRecord(body.data) || !Array.isArray(body.data.items)) throw malformed(NAME, 'token holders: expected {data: {items: [...]}}');
    const holders: TokenHolder[] = [];
    for (const row of body.data.items) {
      if (!isRecord(row)) throw malformed(NAME, 'token holders: an item is not an object');
      const address = parseAddress(row.address);
      const balance = parseAtoms(row.balance);
      if (!address || balance === null) throw malformed(NAME, 'token holders: an item has no address or balance');
      if (balance > 0n) holders.push({ address, balance });
    }
    return rankHolders(holders);
  }
}
