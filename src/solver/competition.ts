/**
 * One competition: every solver solves the auction at once; each solution is checked (`verifySolution`) and
 * scored (CIP-38, less the cost of the orders' hooks), with every order's hooks added as pre/post interactions; they are ranked by score (best = 1, ties by solver order). The winner is the best one that
 * also passes `accept` (the driver's on-chain simulation): the ones above it that fail are filtered out.
 */
import type { Auction } from './auction-types.js';
import { InvalidSolutionError, scoreSolution, verifySolution, withOrderHooks, type Solution, type Solver } from './solution.js';

export interface RankedSolution {
  solution: Solution;
  score: bigint;
  /** 1 = best; filtered-out solutions rank after the valid ones */
  ranking: number;
  filteredOut: boolean;
  /** why it was filtered out */
  reason: string | null;
  isWinner: boolean;
}

export interface CompetitionLogger {
  warn(obj: object, msg?: string): void;
}

export type AcceptSolution = (solution: Solution) => Promise<{ ok: true } | { ok: false; reason: string }>;

/** `gasPrice` (wei): what a unit of hook gas costs a solution's score. */
export async function runCompetition(auction: Auction, solvers: readonly Solver[], accept: AcceptSolution | null, logger?: CompetitionLogger, gasPrice = 0n): Promise<RankedSolution[]> {
  if (auction.orders.length === 0) return [];
  const results = await Promise.allSettled(solvers.map((s) => s.solve(auction)));
  const entries: Array<{ solution: Solution; score: bigint; reason: string | null; order: number }> = [];
  results.forEach((result, i) => {
    if (result.status === 'rejected') {
      logger?.warn({ err: result.reason, solver: solvers[i].name, auctionId: auction.id }, 'solver failed');
      return;
    }
    for (const proposed of result.value) {
      const solution = withOrderHooks(proposed);
      let reason: string | null = solution.rejected ?? null;
      if (reason === null) {
        try {
          verifySolution(solution);
        } catch (err) {
          if (!(err instanceof InvalidSolutionError)) throw err;
          reason = err.message;
        }
      }
      entries.push({ solution, score: reason === null ? scoreSolution(solution, auction.prices, gasPrice) : 0n, reason, order: entries.length });
    }
  });
  entries.sort((x, y) => {
    if ((x.reason === null) !== (y.reason === null)) return x.reason === null ? -1 : 1;
    if (x.score !== y.score) return x.score > y.score ? -1 : 1;
    return x.order - y.order;
  });
  const ranked: RankedSolution[] = entries.map((e, i) => ({ solution: e.solution, score: e.score, ranking: i + 1, filteredOut: e.reason !== null, reason: e.reason, isWinner: false }));
  if (!accept) return ranked;
  for (const r of ranked) {
    if (r.filteredOut) continue;
    const verdict = await accept(r.solution);
    if (verdict.ok) {
      r.isWinner = true;
      break;
    }
    r.filteredOut = true;
    r.reason = verdict.reason;
  }
  return ranked;
}
