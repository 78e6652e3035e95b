/**
 * Which orders make a solution's settlement revert: the solver that proposed it solves halves of its orders
 * (bisection) and each half's solution is simulated; a half that fails is split again until single orders are
 * left. An order is blamed only when a solution of it alone fails to simulate; when every part passes (the
 * failure comes from the orders together, or from the solver) nobody is blamed. Probes are bounded.
 *
 * @example
 *   const bad = await findFailingOrders(auction, router, failed, (s) => driver.prepare(s, auction.id));
 *   // [{ uid, reason: 'simulation: GPv2: ...' }]
 */
import type { Hex } from 'viem';
import type { Auction, SolvableOrder } from './auction-types.js';
import { withOrderHooks, type Solution, type Solver } from './solution.js';
import type { AcceptSolution } from './competition.js';

export interface FailingOrder {
  uid: Hex;
  reason: string;
}

export async function findFailingOrders(auction: Auction, solver: Solver, failed: Solution, simulate: AcceptSolution, maxProbes = 32): Promise<FailingOrder[]> {
  let probes = 0;
  /** null: the orders settle (or no solution to blame them by); else the simulation's reason */
  const probe = async (orders: SolvableOrder[]): Promise<string | null> => {
    probes++;
    const solutions = await solver.solve({ ...auction, orders }).catch(() => []);
    const best = solutions.filter((s) => s.trades.length > 0).sort((a, b) => b.trades.length - a.trades.length)[0];
    if (!best) return null;
    const verdict = await simulate(withOrderHooks(best));
    return verdict.ok ? null : verdict.reason;
  };
  const bisect = async (orders: SolvableOrder[], reason: string): Promise<FailingOrder[]> => {
    if (orders.length === 1) return [{ uid: orders[0]!.uid, reason }];
    const half = Math.ceil(orders.length / 2);
    const found: FailingOrder[] = [];
    for (const part of [orders.slice(0, half), orders.slice(half)]) {
      if (probes >= maxProbes) break;
      const failure = await probe(part);
      if (failure !== null) found.push(...(await bisect(part, failure)));
    }
    return found;
  };
  const orders = failed.trades.map((t) => t.order);
  if (orders.length === 0) return [];
  if (orders.length === 1) {
    // a lone order: confirm it fails alone (the solver may have failed, not the order)
    const failure = await probe(orders);
    return failure === null ? [] : [{ uid: orders[0]!.uid, reason: failure }];
  }
  return bisect(orders, 'simulation failed');
}
