/**
 * Which orders make a settlement revert (issue 19, major 9): an order failing alone is blamed as before; two orders
 * that settle alone but not together — the cooperating pair that halted AMM settlement — are found as a
 * combination, its oldest order spared and the other blamed; a search cut short by its probe budget blames nobody.
 * The solver and the simulation are stand-ins here (each solution trades exactly the orders it is given; the
 * simulation fails on the given rule); the real chain runs them in the auction-loop tests.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { solvableOrder } from '../../test/fixtures/solvable-orders.js';
import type { Auction, SolvableOrder } from './auction-types.js';
import { findFailingOrders } from './failing-orders.js';
import type { Solution, Solver } from './solution.js';

const A = '0x00000000000000000000000000000000000000aa' as Address;
const B = '0x00000000000000000000000000000000000000bb' as Address;
const orders = Array.from({ length: 8 }, (_, i) => solvableOrder(i + 1, { sellToken: A, buyToken: B, sellAmount: 10n ** 18n, buyAmount: 3000n }));
const auction: Auction = { chainId: 31337, id: 1, block: 1, timestamp: 1, orders, prices: new Map(), settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' };
const solutionOf = (list: SolvableOrder[]): Solution => ({ solver: 'all', trades: list.map((order) => ({ order, executedSell: order.sellAmount, executedBuy: order.buyAmount })), clearingPrices: new Map(), interactions: { pre: [], intra: [], post: [] }, interactionEffects: [] });
const everything: Solver = { name: 'all', solve: async (a) => (a.orders.length > 0 ? [solutionOf(a.orders)] : []) };
/** a simulation that fails when the settlement holds every order of one of `rules` */
const failingWhen = (...rules: Hex[][]) => async (s: Solution) => {
  const uids = new Set(s.trades.map((t) => t.order.uid));
  const rule = rules.find((r) => r.every((u) => uids.has(u)));
  return rule ? { ok: false as const, reason: `simulation: reverts with ${rule.length} of them` } : { ok: true as const };
};

describe('finding the orders that make a settlement fail', () => {
  it('blames an order that fails alone', async () => {
    const bad = await findFailingOrders(auction, everything, solutionOf(orders), failingWhen([orders[5]!.uid]));
    assert.deepEqual(bad, [{ uid: orders[5]!.uid, reason: 'simulation: reverts with 1 of them', with: [] }]);
  });

  it('finds two orders that fail only together, spares the older one and blames the newer', async () => {
    for (const [x, y] of [[1, 6], [0, 7], [3, 4]] as const) {
      const bad = await findFailingOrders(auction, everything, solutionOf(orders), failingWhen([orders[x]!.uid, orders[y]!.uid]));
      assert.deepEqual(bad, [{ uid: orders[y]!.uid, reason: 'simulation: reverts with 2 of them', with: [orders[x]!.uid] }], `orders ${x} and ${y}`);
    }
  });

  it('finds a combination of three, blaming all but its oldest', async () => {
    const bad = await findFailingOrders(auction, everything, solutionOf(orders), failingWhen([orders[2]!.uid, orders[4]!.uid, orders[6]!.uid]));
    assert.deepEqual(bad.map((b) => b.uid).sort(), [orders[4]!.uid, orders[6]!.uid].sort());
    for (const b of bad) assert.ok(b.with.includes(orders[2]!.uid));
  });

  it('blames nobody when the orders settle on their own (the solver failed) or the search is cut short', async () => {
    assert.deepEqual(await findFailingOrders(auction, everything, solutionOf(orders), async () => ({ ok: true })), []);
    assert.deepEqual(await findFailingOrders(auction, everything, solutionOf(orders), failingWhen([orders[1]!.uid, orders[6]!.uid]), 4), []);
  });
});
