/**
 * The current auction of each chain (table `auctions`): ids strictly increase (the next is one above the stored
 * one, assigned inside the insert's transaction), and only the latest row is kept, as upstream — the history of
 * each auction lives in its solver competition.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { auctionJson, type Auction, type AuctionJson } from '../solver/auction-types.js';

export class AuctionStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  /**
   * Stores the auction as the current one and returns it with its id. Concurrent writers (two replicas) both
   * get distinct ids: a conflicting id is retried.
   */
  async save(auction: Omit<Auction, 'id'>): Promise<Auction> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction().execute(async (tx) => {
          const row = await tx
            .selectFrom('auctions')
            .select((eb) => eb.fn.max('id').as('id'))
            .where('chain_id', '=', this.chainId)
            .executeTakeFirst();
          const competition = await tx
            .selectFrom('solver_competitions')
            .select((eb) => eb.fn.max('auction_id').as('id'))
            .where('chain_id', '=', this.chainId)
            .executeTakeFirst();
          const id = Math.max(Number(row?.id ?? 0), Number(competition?.id ?? 0)) + 1;
          const stored: Auction = { ...auction, id };
          await tx
            .insertInto('auctions')
            .values({ chain_id: this.chainId, id, block: auction.block, auction: JSON.stringify(auctionJson(stored)) })
            .execute();
          await tx.deleteFrom('auctions').where('chain_id', '=', this.chainId).where('id', '<', id).execute();
          return stored;
        });
      } catch (err) {
        if (attempt >= 3 || !/duplicate key|unique/i.test((err as Error).message ?? '')) throw err;
      }
    }
  }

  /** The current auction as served by GET /api/v1/auction (null before the first). */
  async current(): Promise<AuctionJson | null> {
    const text = await this.currentText();
    return text === null ? null : (JSON.parse(text) as AuctionJson);
  }

  /** The current auction as JSON text, as stored (the route sends it without re-serialising 10k orders). */
  async currentText(): Promise<string | null> {
    const row = await this.db
      .selectFrom('auctions')
      .select(sql<string>`auction::text`.as('auction'))
      .where('chain_id', '=', this.chainId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.auction ?? null;
  }
}
