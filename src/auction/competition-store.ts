/**
 * Solver competitions: every auction that received at least one solution is stored once (table
 * `solver_competitions`, the solutions as JSON, plus one `proposed_trade_executions` row per order of each
 * solution for lookups by order) and served from that one record in the v1 shape (spec; reference §8.3) and in
 * the v2 shape (SDK; reference §8.2). Transaction hashes come from the settlement submissions that landed.
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { fromNumeric, toBytes, toHex, toNumeric } from '../db/codec.js';
import type { DB } from '../db/schema.js';
import type { RankedSolution } from '../solver/competition.js';
import type { Auction } from '../solver/auction-types.js';

export interface StoredSolutionOrder {
  id: Hex;
  sellAmount: string;
  buyAmount: string;
  sellToken: Address;
  buyToken: Address;
}

export interface StoredSolution {
  solver: string;
  solverAddress: Address;
  score: string;
  ranking: number;
  clearingPrices: Record<string, string>;
  orders: StoredSolutionOrder[];
  isWinner: boolean;
  filteredOut: boolean;
  filterReason: string | null;
}

/** What became of a winning solution the driver submitted. */
export interface StoredSettlement {
  solverAddress: Address;
  status: string;
  txHash: Hex | null;
  reason: string | null;
}

export interface StoredCompetition {
  auctionId: number;
  startBlock: number;
  deadlineBlock: number;
  auction: { orders: Hex[]; prices: Record<string, string> };
  solutions: StoredSolution[];
  transactionHashes: Hex[];
  /** the submissions of this auction (pending, mined, settled, reverted, dropped, failed) */
  settlements: StoredSettlement[];
}

const ZERO: Address = '0x0000000000000000000000000000000000000000';

export class CompetitionStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  async save(auction: Auction, ranked: RankedSolution[], solverAddress: Address | null, deadlineBlock: number): Promise<void> {
    const solutions: StoredSolution[] = ranked.map((r) => ({
      solver: r.solution.solver,
      solverAddress: (solverAddress ?? ZERO).toLowerCase() as Address,
      score: r.score.toString(),
      ranking: r.ranking,
      clearingPrices: Object.fromEntries([...r.solution.clearingPrices].map(([t, p]) => [t, p.toString()])),
      orders: r.solution.trades.map((t) => ({
        id: t.order.uid,
        sellAmount: t.executedSell.toString(),
        buyAmount: t.executedBuy.toString(),
        sellToken: t.order.sellToken,
        buyToken: t.order.buyToken,
      })),
      isWinner: r.isWinner,
      filteredOut: r.filteredOut,
      filterReason: r.reason,
    }));
    const auctionRecord = { orders: auction.orders.map((o) => o.uid), prices: Object.fromEntries([...auction.prices].map(([t, p]) => [t, p.toString()])) };
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('solver_competitions')
        .values({
          chain_id: this.chainId,
          auction_id: auction.id,
          start_block: auction.block,
          deadline_block: deadlineBlock,
          auction: JSON.stringify(auctionRecord),
          solutions: JSON.stringify(solutions),
        })
        .execute();
      const rows = ranked.flatMap((r, index) =>
        r.solution.trades.map((t) => ({
          chain_id: this.chainId,
          auction_id: auction.id,
          solution_index: index,
          order_uid: toBytes(t.order.uid),
          executed_sell: toNumeric(t.executedSell),
          executed_buy: toNumeric(t.executedBuy),
        })),
      );
      for (let i = 0; i < rows.length; i += 5_000) await tx.insertInto('proposed_trade_executions').values(rows.slice(i, i + 5_000)).execute();
    });
  }

  async byAuctionId(auctionId: number): Promise<StoredCompetition | null> {
    const row = await this.db.selectFrom('solver_competitions').selectAll().where('chain_id', '=', this.chainId).where('auction_id', '=', auctionId).executeTakeFirst();
    return row ? this.withTransactions(row) : null;
  }

  async latest(): Promise<StoredCompetition | null> {
    const row = await this.db.selectFrom('solver_competitions').selectAll().where('chain_id', '=', this.chainId).orderBy('auction_id', 'desc').limit(1).executeTakeFirst();
    return row ? this.withTransactions(row) : null;
  }

  /** The most recent competitions, newest first (the dashboard's recent auctions). */
  async recent(limit: number): Promise<StoredCompetition[]> {
    const rows = await this.db.selectFrom('solver_competitions').selectAll().where('chain_id', '=', this.chainId).orderBy('auction_id', 'desc').limit(limit).execute();
    return Promise.all(rows.map((row) => this.withTransactions(row)));
  }

  async byTxHash(txHash: Hex): Promise<StoredCompetition | null> {
    const hit = await this.db
      .selectFrom('competition_settlements')
      .select('auction_id')
      .where('chain_id', '=', this.chainId)
      .where('tx_hash', '=', toBytes(txHash))
      .where('status', '!=', 'reorged') // its block was reorganised away (chain/indexer/rewind.ts)
      .executeTakeFirst();
    return hit ? this.byAuctionId(Number(hit.auction_id)) : null;
  }

  /** The latest competition in which some solution proposed to trade the order, with those executions. */
  async latestForOrder(uid: Hex): Promise<StoredCompetition | null> {
    const hit = await this.db
      .selectFrom('proposed_trade_executions')
      .select('auction_id')
      .where('chain_id', '=', this.chainId)
      .where('order_uid', '=', toBytes(uid))
      .orderBy('auction_id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return hit ? this.byAuctionId(Number(hit.auction_id)) : null;
  }

  private async withTransactions(row: { auction_id: number; start_block: number; deadline_block: number; auction: unknown; solutions: unknown }): Promise<StoredCompetition> {
    const submissions = await this.db
      .selectFrom('competition_settlements')
      .select(['tx_hash', 'status', 'solver', 'reason'])
      .where('chain_id', '=', this.chainId)
      .where('auction_id', '=', Number(row.auction_id))
      .execute();
    const txs = submissions.filter((s) => s.status === 'mined' || s.status === 'settled');
    const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
    return {
      auctionId: Number(row.auction_id),
      startBlock: Number(row.start_block),
      deadlineBlock: Number(row.deadline_block),
      auction: parse(row.auction),
      solutions: parse(row.solutions),
      transactionHashes: txs.flatMap((t) => (t.tx_hash ? [toHex(t.tx_hash)] : [])),
      settlements: submissions.map((s) => ({ solverAddress: toHex(s.solver) as Address, status: s.status, txHash: s.tx_hash ? toHex(s.tx_hash) : null, reason: s.reason })),
    };
  }
}

/** Score of the best solution by another solver than the winner's (0 without one): the winner's reference score. */
function referenceScore(competition: StoredCompetition): bigint | null {
  const winner = competition.solutions.find((s) => s.isWinner);
  if (!winner) return null;
  let best = 0n;
  for (const s of competition.solutions) if (!s.filteredOut && s.solver !== winner.solver && fromNumeric(s.score) > best) best = fromNumeric(s.score);
  return best;
}

/**
 * The winner's submission as the records show it (an addition to upstream's shapes): `{status, txHash, reason}`
 * — e.g. `reverted` with the revert reason — or null for the other solutions and before anything was sent.
 */
function settlementOf(c: StoredCompetition, s: StoredSolution): { status: string; txHash: Hex | null; reason: string | null } | null {
  if (!s.isWinner) return null;
  const found = (c.settlements ?? []).find((x) => x.solverAddress.toLowerCase() === s.solverAddress.toLowerCase());
  return found ? { status: found.status, txHash: found.txHash, reason: found.reason } : null;
}

/** The v1 record (spec; last upstream shape). */
export function competitionV1(c: StoredCompetition): Record<string, unknown> {
  return {
    auctionId: c.auctionId,
    transactionHashes: c.transactionHashes,
    auctionStartBlock: c.startBlock,
    competitionSimulationBlock: c.startBlock,
    auction: c.auction,
    solutions: c.solutions.map((s) => ({
      solver: s.solver,
      solverAddress: s.solverAddress,
      score: s.score,
      ranking: s.ranking,
      clearingPrices: s.clearingPrices,
      orders: s.orders.map((o) => ({ id: o.id, sellAmount: o.sellAmount, buyAmount: o.buyAmount })),
      isWinner: s.isWinner,
      filteredOut: s.filteredOut,
      settlement: settlementOf(c, s),
    })),
  };
}

/** The v2 record (what the SDK's getSolverCompetition reads). */
export function competitionV2(c: StoredCompetition): Record<string, unknown> {
  const reference = referenceScore(c);
  const winner = c.solutions.find((s) => s.isWinner);
  return {
    auctionId: c.auctionId,
    auctionStartBlock: c.startBlock,
    auctionDeadlineBlock: c.deadlineBlock,
    transactionHashes: c.transactionHashes,
    referenceScores: winner && reference !== null ? { [winner.solverAddress]: reference.toString() } : {},
    auction: c.auction,
    solutions: c.solutions.map((s) => ({
      solverAddress: s.solverAddress,
      score: s.score,
      ranking: s.ranking,
      clearingPrices: s.clearingPrices,
      orders: s.orders.map((o) => ({ id: o.id, sellAmount: o.sellAmount, buyAmount: o.buyAmount, buyToken: o.buyToken, sellToken: o.sellToken })),
      isWinner: s.isWinner,
      filteredOut: s.filteredOut,
      txHash: s.isWinner ? (c.transactionHashes[0] ?? null) : null,
      referenceScore: s.isWinner && reference !== null ? reference.toString() : null,
      settlement: settlementOf(c, s),
    })),
  };
}
