/**
 * What happened to each winning solution the driver submitted (table `competition_settlements`, one row per
 * auction and solver account): pending → mined (receipt ok) → settled (its trades are indexed), or reverted /
 * dropped / failed. Orders of pending and of mined-but-not-yet-indexed submissions are in flight: no new auction
 * offers them, so they are never settled twice; a reverted or dropped submission releases them at once.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toBytes, toHex } from '../db/codec.js';
import type { DB } from '../db/schema.js';

/** `reorged`: mined in a block a reorg removed (set by chain/indexer/rewind.ts) */
export type SubmissionStatus = 'pending' | 'mined' | 'settled' | 'reverted' | 'dropped' | 'failed' | 'reorged';

/** Blocks after which a mined submission whose trades never got indexed (a reorg) stops holding its orders. */
const MINED_HOLD_BLOCKS = 64;

export interface Submission {
  auctionId: number;
  solver: Address;
  txHash: Hex | null;
  status: SubmissionStatus;
  reason: string | null;
  blockNumber: number | null;
  orderUids: Hex[];
}

export class SettlementSubmissions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  /** Records a submission about to be sent: its orders are in flight from now on. */
  async begin(auctionId: number, solver: Address, orderUids: Hex[]): Promise<void> {
    await this.db
      .insertInto('competition_settlements')
      .values({ chain_id: this.chainId, auction_id: auctionId, solver: toBytes(solver), status: 'pending', order_uids: orderUids.map(toBytes), tx_hash: null, reason: null })
      .execute();
  }

  async sent(auctionId: number, solver: Address, txHash: Hex): Promise<void> {
    await this.update(auctionId, solver, { tx_hash: toBytes(txHash) });
  }

  async resolve(auctionId: number, solver: Address, status: Exclude<SubmissionStatus, 'pending'>, details: { blockNumber?: number; reason?: string } = {}): Promise<void> {
    await this.update(auctionId, solver, { status, block_number: details.blockNumber ?? null, reason: details.reason ?? null });
  }

  private async update(auctionId: number, solver: Address, set: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('competition_settlements')
      .set({ ...set, updated_at: sql`now()` } as never)
      .where('chain_id', '=', this.chainId)
      .where('auction_id', '=', auctionId)
      .where('solver', '=', toBytes(solver))
      .execute();
  }

  /** UIDs of the orders a pending, or mined but not yet indexed, submission settles. */
  async inFlightOrderUids(headBlock: number): Promise<Set<Hex>> {
    const rows = await this.db
      .selectFrom('competition_settlements as cs')
      .select('cs.order_uids')
      .where('cs.chain_id', '=', this.chainId)
      .where((eb) =>
        eb.or([
          eb('cs.status', '=', 'pending'),
          eb.and([
            eb('cs.status', '=', 'mined'),
            eb('cs.block_number', '>=', headBlock - MINED_HOLD_BLOCKS),
            eb.not(eb.exists(eb.selectFrom('trades as t').select('t.order_uid').whereRef('t.chain_id', '=', 'cs.chain_id').whereRef('t.tx_hash', '=', 'cs.tx_hash'))),
          ]),
        ]),
      )
      .execute();
    const out = new Set<Hex>();
    for (const row of rows) for (const uid of row.order_uids ?? []) out.add(toHex(uid));
    return out;
  }

  /**
   * Mined submissions whose trades the indexer has written become settled, and the indexed `settlements` rows
   * learn their auction id. Returns how many submissions changed.
   */
  async markIndexed(): Promise<number> {
    await sql`
      update settlements s set auction_id = cs.auction_id
      from competition_settlements cs
      where s.chain_id = ${this.chainId} and cs.chain_id = s.chain_id and cs.tx_hash = s.tx_hash and s.auction_id is null`.execute(this.db);
    const changed = await this.db
      .updateTable('competition_settlements as cs')
      .set({ status: 'settled', updated_at: sql`now()` } as never)
      .where('cs.chain_id', '=', this.chainId)
      .where('cs.status', '=', 'mined')
      .where((eb) => eb.exists(eb.selectFrom('trades as t').select('t.order_uid').whereRef('t.chain_id', '=', 'cs.chain_id').whereRef('t.tx_hash', '=', 'cs.tx_hash')))
      .returning('cs.auction_id')
      .execute();
    return changed.length;
  }

  /** Submissions left pending by an earlier process (it stopped while one was in flight). */
  async unresolved(): Promise<Submission[]> {
    const rows = await this.db.selectFrom('competition_settlements').selectAll().where('chain_id', '=', this.chainId).where('status', '=', 'pending').execute();
    return rows.map((r) => this.fromRow(r));
  }

  private fromRow(r: { auction_id: number; solver: Uint8Array; tx_hash: Uint8Array | null; status: string; reason: string | null; block_number: number | null; order_uids: Uint8Array[] }): Submission {
    return {
      auctionId: Number(r.auction_id),
      solver: toHex(r.solver) as Address,
      txHash: r.tx_hash ? toHex(r.tx_hash) : null,
      status: r.status as SubmissionStatus,
      reason: r.reason,
      blockNumber: r.block_number === null ? null : Number(r.block_number),
      orderUids: (r.order_uids ?? []).map(toHex),
    };
  }
}
