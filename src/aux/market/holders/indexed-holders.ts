/**
 * First-party top holders from the indexer's `token_holder_balances` (net of every indexed Transfer, mints and
 * WETH deposits included, zero balances dropped; largest first through the top-holders index).
 *
 * Only exact data is served: a token's balances are complete when its Transfers are indexed from block 0 and
 * the back-fill has caught up (`indexer_sources`: from_block = 0, backfilled_to null). On a real chain indexed
 * from the head the sums would miss everything before the start, so the source answers null (no data) and the
 * external holder APIs are asked instead. A complete token without holders answers [].
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import { toBytes } from '../../../db/codec.js';
import type { DB } from '../../../db/schema.js';
import { topTokenHolders } from '../../../chain/indexer/holder-queries.js';
import { MAX_HOLDERS, type HoldersQuery, type TokenHolder, type TokenHolderSource } from '../../../providers/ports/market.js';

export interface IndexedTokenHoldersOptions {
  db: Kysely<DB>;
  /** the indexer's checkpoint name (default 'main') */
  indexerName?: string;
}

export class IndexedTokenHolders implements TokenHolderSource {
  readonly name = 'indexer';
  constructor(private readonly options: IndexedTokenHoldersOptions) {}

  /** true when the token's balances are indexed from block 0 and caught up */
  async complete(chainId: number, token: Address): Promise<boolean> {
    const source = await this.options.db
      .selectFrom('indexer_sources')
      .select(['from_block', 'backfilled_to'])
      .where('chain_id', '=', chainId)
      .where('name', '=', this.options.indexerName ?? 'main')
      .where('kind', '=', 'token')
      .where('address', '=', toBytes(token))
      .executeTakeFirst();
    return source !== undefined && Number(source.from_block) === 0 && source.backfilled_to === null;
  }

  async lookup(query: HoldersQuery): Promise<TokenHolder[] | null> {
    if (!(await this.complete(query.chainId, query.token))) return null;
    const rows = await topTokenHolders(this.options.db, query.chainId, query.token, MAX_HOLDERS);
    return rows.map((r) => ({ address: r.holder.toLowerCase() as Address, balance: r.balance }));
  }
}
