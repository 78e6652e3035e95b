/**
 * Top holders from Ethplorer (and its sister explorers; reference auxiliary.md §4):
 *
 *   GET {host}/getTopTokenHolders/{token}?apiKey={key}&limit=100
 *   → { holders: [{ address, balance: <float>, share, rawBalance: "<atoms>" }] }
 *   errors: { error: { code, message } } (code 150: "address is not a token contract")
 *
 * `rawBalance` is used (the float `balance` loses precision). 404 and error code 150 → null; other errors,
 * 429/5xx and timeouts reject.
 */
import type { HoldersQuery, TokenHolder, TokenHolderSource } from './ports/market.js';
import { MAX_HOLDERS } from './ports/market.js';
import { rankHolders } from './rank-holders.js';
import { expectOk, isRecord, malformed, parseAddress, parseAtoms, providerRequest, type FetchLike } from './provider-http.js';

export const ETHPLORER_HOSTS: Readonly<Record<number, string>> = {
  1: 'https://api.ethplorer.io',
  11155111: 'https://sepolia-api.ethplorer.io',
  56: 'https://api.binplorer.com',
  59144: 'https://api.lineaplorer.build',
};

export interface EthplorerOptions {
  apiKey: string;
  /** chain id → host (default ETHPLORER_HOSTS) */
  hosts?: Readonly<Record<number, string>>;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'ethplorer';
const NOT_A_TOKEN = 150;

export class EthplorerTokenHolders implements TokenHolderSource {
  readonly name = NAME;
  constructor(private readonly options: EthplorerOptions) {}

  async lookup(query: HoldersQuery): Promise<TokenHolder[] | null> {
    const host = (this.options.hosts ?? ETHPLORER_HOSTS)[query.chainId];
    if (!host) return null;
    const url = `${host.replace(/\/+$/, '')}/getTopTokenHolders/${query.token.toLowerCase()}?apiKey=${encodeURIComponent(this.options.apiKey)}&limit=${MAX_HOLDERS}`;
    const res = await providerRequest(NAME, url, {}, { timeoutMs: this.options.timeoutMs ?? 5_000, fetch: this.options.fetch });
    if (res.status === 404) return null;
    if (isRecord(res.body) && isRecord(res.body.error)) {
      if (res.body.error.code === NOT_A_TOKEN) return null;
      if (res.status < 500 && res.status !== 429) {
        throw malformed(NAME, `top holders: error ${String(res.body.error.code)} (HTTP ${res.status})`);
      }
    }
    expectOk(NAME, res, 'top holders');
    if (!isRecord(res.body) || !Array.isArray(res.body.holders)) throw malformed(NAME, 'top holders: expected {holders: [...]}');
    const holders: TokenHolder[] = [];
    for (const row of res.body.holders) {
      if (!isRecord(row)) throw malformed(NAME, 'top holders: a row is not an object');
      const address = parseAddress(row.address);
      const balance = parseAtoms(row.rawBalance);
      if (!address || balance === null) throw malformed(NAME, 'top holders: a row has no address or rawBalance');
      if (balance > 0n) holders.push({ address, balance });
    }
    return rankHolders(holders);
  }
}
