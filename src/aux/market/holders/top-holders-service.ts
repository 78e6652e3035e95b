/**
 * Top holders of a token on one chain (spec §4.1 topHolders): the indexed balances first, then the holder APIs
 * configured (Moralis, Ethplorer, GoldRush), each cached; largest first, at most `limit` (≤ MAX_HOLDERS).
 *
 * Outcomes: the holders; MarketError NotFound when the address is neither tracked nor an ERC-20 on the chain,
 * or when no source has holders for it; MarketError Unavailable when no source answered and one failed.
 */
import type { Address } from 'viem';
import { SourcesUnavailableError } from '../../../providers/data-source.js';
import type { FallbackSource } from '../../../providers/fallback.js';
import { MarketError } from '../market-error.js';
import { MAX_HOLDERS, type HoldersQuery, type TokenHolder } from '../../../providers/ports/market.js';

export interface TopHoldersServiceOptions {
  chainId: number;
  sources: FallbackSource<HoldersQuery, TokenHolder[]>;
  /** tokens whose Transfers the indexer follows (lowercase) */
  trackedTokens: readonly Address[];
  isToken: (token: Address) => Promise<boolean>;
  /** Cache-Control max-age of answers, seconds */
  maxAgeSeconds: number;
}

export class TopHoldersService {
  readonly maxAgeSeconds: number;
  private readonly tracked: Set<string>;

  constructor(private readonly options: TopHoldersServiceOptions) {
    this.maxAgeSeconds = options.maxAgeSeconds;
    this.tracked = new Set(options.trackedTokens.map((t) => t.toLowerCase()));
  }

  async topHolders(token: Address, limit: number = MAX_HOLDERS): Promise<TokenHolder[]> {
    const { chainId } = this.options;
    const address = token.toLowerCase() as Address;
    if (!this.tracked.has(address)) {
      let isToken: boolean;
      try {
        isToken = await this.options.isToken(address);
      } catch (err) {
        throw new MarketError('Unavailable', `could not read token ${address} on chain ${chainId}; try again`, { cause: err });
      }
      if (!isToken) throw new MarketError('NotFound', `${address} is not an ERC-20 token on chain ${chainId}`);
    }
    let holders: TokenHolder[] | null;
    try {
      holders = await this.options.sources.lookup({ chainId, token: address });
    } catch (err) {
      if (err instanceof SourcesUnavailableError) throw new MarketError('Unavailable', `holders of ${address} are temporarily unavailable: ${err.message}`, { cause: err });
      throw err;
    }
    if (holders === null) throw new MarketError('NotFound', `no holder data for token ${address} on chain ${chainId}`);
    return holders.slice(0, Math.max(1, Math.min(limit, MAX_HOLDERS)));
  }
}
