/**
 * What happened to each winning solution the driver submitted (table `competition_settlements`, one row per
 * auction and solver account): pending → mined (receipt ok) → settled (its trades are indexed), or reverted /
 * dropped / failed. Orders of pending and of mined-but-not-yet-indexed submissions are in flight: no new auction
 * offers them, so they are never settled twice; a reverted or dropped submission releases them at once.
 *
 * Given the leader's lease, a transaction is recorded (and so broadcast) only while that lease is current: a leader
 * that lost its lock without noticing yet cannot send once another replica leads (see db/leadership.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { fromNumeric, toBytes, toHex, toNumeric } from '../db/codec.js';
import type { DB } from '../db/schema.js';
import { leaseIsCurrent, type LeadershipLease } from '../db/leadership.js';

/** `reorged`: mined in a block a reorg removed (set by chain/indexer/rewind.ts) */
export type SubmissionStatus = 'pending' | 'mined' | 'settled' | 'reverted' | 'dropped' | 'failed' | 'reorged';

/** Blocks after which a mined submission whose trades never got indexed (a reorg) stops holding its orders. */
const MINED_HOLD_BLOCKS = 64;

export interface Submission {
  auctionId: number;
  solver: Address;
  /** the latest hash sent (or the one that landed) */
  txHash: Hex | null;
  status: SubmissionStatus;
  reason: string | null;
  blockNumber: number | null;
  orderUids: Hex[];
  /** the nonce every transaction of this submission uses (null until the first is signed) */
  nonce: number | null;
  /** every hash sent for the nonce, oldest first */
  txHashes: Hex[];
  maxFeePerGas: bigint | null;
  maxPriorityFeePerGas: bigint | null;
  /** the block the latest transaction was sent in */
  sentBlock: number | null;
  /** the block the submission was recorded in */
  createdBlock: number | null;
}

/** One signed transaction of a submission, recorded before it is broadcast. */
export interface SubmissionAttempt {
  txHash: Hex;
  nonce: number;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  sentBlock: number;
}

export class SettlementSubmissions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
    /** the leadership this process sends under (null or absent: not fenced) */
    private readonly lease: LeadershipLease | null = null,
  ) {}

  /**
   * Records a submission about to be sent: its orders are in flight from now on. `createdBlock` (the head when
   * it was recorded) bounds how long it may stay unsent; `solutionHash` identifies the solution (see `revertedSolution`).
   */
  async begin(auctionId: number, solver: Address, orderUids: Hex[], details: { createdBlock?: number; solutionHash?: Hex } = {}): Promise<void> {
    await this.db
      .insertInto('competition_settlements')
      .values({
        chain_id: this.chainId,
        auction_id: auctionId,
        solver: toBytes(solver),
        status: 'pending',
        order_uids: orderUids.map(toBytes),
        tx_hash: null,
        reason: null,
        created_block: details.createdBlock ?? null,
        solution_hash: details.solutionHash ? toBytes(details.solutionHash) : null,
      })
      .execute();
  }

  /** Records a hash without nonce tracking (kept for callers that send by other means). */
  async sent(auctionId: number, solver: Address, txHash: Hex): Promise<void> {
    await this.update(auctionId, solver, { tx_hash: toBytes(txHash), tx_hashes: sql`array_append(tx_hashes, ${toBytes(txHash)})` });
  }

  /**
   * Records a signed transaction before it is broadcast. The first one (`first`) only while the submission is
   * pending and has none; a replacement only while it is pending with the same nonce. False: not recorded — the
   * submission was resolved meanwhile (by another process), or this process's leadership lease is no longer current
   * (another replica leads now), so the transaction must not be sent.
   */
  async recordAttempt(auctionId: number, solver: Address, attempt: SubmissionAttempt, first: boolean): Promise<boolean> {
    if (!this.lease || this.lease.epoch === null) return this.writeAttempt(this.db, auctionId, solver, attempt, first);
    return this.db.transaction().execute(async (trx) => {
      if (!(await leaseIsCurrent(trx, this.lease))) return false;
      return this.writeAttempt(trx, auctionId, solver, attempt, first);
    });
  }

  private async writeAttempt(db: Kysely<DB>, auctionId: number, solver: Address, attempt: SubmissionAttempt, first: boolean): Promise<boolean> {
    let query = db
      .updateTable('competition_settlements')
      .set({
        tx_hash: toBytes(attempt.txHash),
        tx_hashes: sql`array_append(tx_hashes, ${toBytes(attempt.txHash)})`,
        nonce: attempt.nonce,
        max_fee_per_gas: toNumeric(attempt.maxFeePerGas),
        max_priority_fee_per_gas: toNumeric(attempt.maxPriorityFeePerGas),
        sent_block: attempt.sentBlock,
        updated_at: sql`now()`,
      } as never)
      .where('chain_id', '=', this.chainId)
      .where('auction_id', '=', auctionId)
      .where('solver', '=', toBytes(solver))
      .where('status', '=', 'pending');
    query = first ? query.where('tx_hash', 'is', null) : query.where('nonce', '=', attempt.nonce);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Resolves a pending submission (a resolved one keeps its status: two followers never overwrite each other).
   * `txHash`: the transaction that landed, when it is not the latest one sent. False when it was no longer pending.
   */
  async resolve(auctionId: number, solver: Address, status: Exclude<SubmissionStatus, 'pending'>, details: { blockNumber?: number; reason?: string; txHash?: Hex } = {}): Promise<boolean> {
    const set: Record<string, unknown> = { status, block_number: details.blockNumber ?? null, reason: details.reason ?? null };
    if (details.txHash) set.tx_hash = toBytes(details.txHash);
    return this.update(auctionId, solver, set, true);
  }

  /** Submissions still unsent `graceBlocks` after they were recorded become failed (their sender gave up or died). */
  async failUnsent(headBlock: number, graceBlocks: number): Promise<number> {
    const result = await this.db
      .updateTable('competition_settlements')
      .set({ status: 'failed', reason: 'not sent in time (the sending process stopped)', updated_at: sql`now()` } as never)
      .where('chain_id', '=', this.chainId)
      .where('status', '=', 'pending')
      .where('tx_hash', 'is', null)
      .where((eb) => eb.or([eb('created_block', 'is', null), eb('created_block', '<', headBlock - graceBlocks)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** The auction of a submission of this solution (same settle calldata) that reverted on chain in or after `sinceBlock`, or null. */
  async revertedSolution(solutionHash: Hex, sinceBlock = 0): Promise<number | null> {
    const row = await this.db
      .selectFrom('competition_settlements')
      .select('auction_id')
      .where('chain_id', '=', this.chainId)
      .where('status', '=', 'reverted')
      .where('solution_hash', '=', toBytes(solutionHash))
      .where('block_number', '>=', sinceBlock)
      .orderBy('auction_id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? Number(row.auction_id) : null;
  }

  /** One submission, or null. */
  async get(auctionId: number, solver: Address): Promise<Submission | null> {
    const row = await this.db
      .selectFrom('competition_settlements')
      .selectAll()
      .where('chain_id', '=', this.chainId)
      .where('auction_id', '=', auctionId)
      .where('solver', '=', toBytes(solver))
      .executeTakeFirst();
    return row ? this.fromRow(row) : null;
  }

  private async update(auctionId: number, solver: Address, set: Record<string, unknown>, onlyPending = false): Promise<boolean> {
    let query = this.db
      .updateTable('competition_settlements')
      .set({ ...set, updated_at: sql`now()` } as never)
      .where('chain_id', '=', this.chainId)
      .where('auction_id', '=', auctionId)
      .where('solver', '=', toBytes(solver));
    if (onlyPending) query = query.where('status', '=', 'pending');
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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

  private fromRow(r: {
    auction_id: number;
    solver: Uint8Array;
    tx_hash: Uint8Array | null;
    status: string;
    reason: string | null;
    block_number: number | null;
    order_uids: Uint8Array[];
    nonce: number | null;
    tx_hashes: Uint8Array[];
    max_fee_per_gas: string | null;
    max_priority_fee_per_gas: string | null;
    sent_block: number | null;
    created_block: number | null;
  }): Submission {
    const num = (v: number | string | bigint | null): number | null => (v === null ? null : Number(v));
    return {
      nonce: num(r.nonce),
      txHashes: (r.tx_hashes ?? []).map(toHex),
      maxFeePerGas: r.max_fee_per_gas === null ? null : fromNumeric(r.max_fee_per_gas),
      maxPriorityFeePerGas: r.max_priority_fee_per_gas === null ? null : fromNumeric(r.max_priority_fee_per_gas),
      sentBlock: num(r.sent_block),
      createdBlock: num(r.created_block),
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
