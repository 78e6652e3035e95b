/**
 * Which orders make a solution's settlement revert: the solver that proposed it solves halves of its orders
 * (bisection) and each half's solution is simulated; a half that fails is split again until single orders are
 * left, and an order that fails alone is blamed. When no order fails alone but the orders fail together (two
 * orders that cannot settle in one settlement, say), the failing combination is found: orders are left out one
 * at a time while the rest still fails, down to a minimal combination (each of its orders needed for the
 * failure); its oldest order is spared and the others are blamed, so the combination cannot settle together
 * again while its first order still can. Probes are bounded; a search cut short blames nobody.
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
  /** the orders it fails together with (empty: it fails alone) */
  with: Hex[];
}

const older = (x: SolvableOrder, y: SolvableOrder): number => x.created - y.created || (x.uid < y.uid ? -1 : 1);

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
    if (orders.length === 1) return [{ uid: orders[0]!.uid, reason, with: [] }];
    const half = Math.ceil(orders.length / 2);
    const found: FailingOrder[] = [];
    for (const part of [orders.slice(0, half), orders.slice(half)]) {
      if (probes >= maxProbes) break;
      const failure = await probe(part);
      if (failure !== null) found.push(...(await bisect(part, failure)));
    }
    return found;
  };
  /** a minimal failing combination of `orders` (which fail together with `reason`), or null when cut short */
  const combination = async (orders: SolvableOrder[], reason: string): Promise<{ orders: SolvableOrder[]; reason: string } | null> => {
    let kept = [...orders];
    // the newest first: a combination that holds the oldest orders is found when there are several
    for (const candidate of [...orders].sort(older).reverse()) {
      if (kept.length <= 2) break;
      if (probes >= maxProbes) return null;
      const without = kept.filter((o) => o !== candidate);
      const failure = await probe(without);
      if (failure !== null) {
        kept = without;
        reason = failure;
      }
    }
    return { orders: kept, reason };
  };

  const orders = failed.trades.map((t) => t.order);
  if (orders.length === 0) return [];
  if (orders.length === 1) {
    // a lone order: confirm it fails alone (the solver may have failed, not the order)
    const failure = await probe(orders);
    return failure === null ? [] : [{ uid: orders[0]!.uid, reason: failure, with: [] }];
  }
  const alone = await bisect(orders, 'simulation failed');
  if (alone.length > 0 || probes >= maxProbes) return alone;
  // nobody fails alone: do they fail together (else the solver failed, not the orders)?
  const together = await probe(orders);
  if (together === null) return [];
  const found = await combination(orders, together);
  if (!found) return [];
  const blamed = [...found.orders].sort(older).slice(1); // the oldest is spared
  return blamed.map((o) => ({ uid: o.uid, reason: found.reason, with: found.orders.filter((x) => x !== o).map((x) => x.uid) }));
}
