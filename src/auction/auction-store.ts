/**
 * The current auction of each chain (table `auctions`): ids strictly increase (the next is one above the stored
 * one, assigned inside the insert's transaction), and only the latest row is kept, as upstream — the history of
 * each auction lives in its solver competition. The auction's JSON is stored gzip-compressed (migration 021):
 * compressed on the thread pool, a twentieth of the text to write, and sent as stored to clients that accept gzip.
 */
import { gunzip, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { auctionJson, type Auction, type AuctionJson } from '../solver/auction-types.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** The current auction as stored: gzip-compressed JSON, or (a row from before migration 021) JSON text. */
export type StoredAuction = { gzip: Buffer } | { text: string };

/** A stored auction's JSON text. */
export async function storedAuctionText(stored: StoredAuction): Promise<string> {
  return 'text' in stored ? stored.text : (await gunzipAsync(stored.gzip)).toString('utf8');
}

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
      const { rows } = await sql<{ id: string | number | null }>`select greatest(
          (select max(id) from auctions where chain_id = ${this.chainId}),
          (select max(auction_id) from solver_competitions where chain_id = ${this.chainId})) as id`.execute(this.db);
      const id = Number(rows[0]?.id ?? 0) + 1;
      const stored: Auction = { ...auction, id };
      // compressed before the transaction (on the thread pool, level 1: a few times faster than the default for a
      // slightly larger row), so the transaction holds the connection only to write
      const compressed = await gzipAsync(JSON.stringify(auctionJson(stored)), { level: 1 });
      try {
        const inserted = await this.db.transaction().execute(async (tx) => {
          // only above every stored id (another writer may have stored this one, or a later one, meanwhile);
          // as base64 text: PGlite takes a long string parameter far faster than a bytea one
          const result = await sql`insert into auctions (chain_id, id, block, auction_gzip)
            select ${this.chainId}, ${id}, ${auction.block}, decode(${compressed.toString('base64')}, 'base64')
            where not exists (select 1 from auctions where chain_id = ${this.chainId} and id >= ${id})`.execute(tx);
          if (Number(result.numAffectedRows ?? 0) === 0) return false;
          await tx.deleteFrom('auctions').where('chain_id', '=', this.chainId).where('id', '<', id).execute();
          return true;
        });
        if (inserted) return stored;
      } catch (err) {
        if (!/duplicate key|unique/i.test((err as Error).message ?? '')) throw err;
      }
      if (attempt >= 3) throw new Error(`auction ${id}: another writer kept storing auctions at the same ids`);
    }
  }

  /** The current auction as served by GET /api/v1/auction (null before the first). */
  async current(): Promise<AuctionJson | null> {
    const text = await this.currentText();
    return text === null ? null : (JSON.parse(text) as AuctionJson);
  }

  /** The current auction as JSON text. */
  async currentText(): Promise<string | null> {
    const stored = await this.currentStored();
    return stored === null ? null : storedAuctionText(stored);
  }

  /** The current auction as stored (the route sends it without re-serialising 10k orders, compressed as it is). */
  async currentStored(): Promise<StoredAuction | null> {
    const row = await this.db
      .selectFrom('auctions')
      .select([sql<string | null>`encode(auction_gzip, 'base64')`.as('gzip'), sql<string | null>`auction::text`.as('text')])
      .where('chain_id', '=', this.chainId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return null;
    if (row.gzip !== null) return { gzip: Buffer.from(row.gzip, 'base64') };
    return row.text === null ? null : { text: row.text };
  }
}
