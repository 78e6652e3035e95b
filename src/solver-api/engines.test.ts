/**
 * The built-in AMM router behind the Solver Engine API, on the auction's own pools: each wire order is routed on
 * its own amounts (the API carries no owner balances), so an owner's order that cannot fill never holds back its
 * other orders.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { AmmRouterEngine } from './engines.js';
import { A, B, E18, testAuction, testOrder } from '../../test/fixtures/solver-auctions.js';

const network = {
  chainId: 31337,
  client: undefined as never, // the pools come from the auction: no chain reads
  settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as Address,
  amm: { factory: '0x00000000000000000000000000000000000000fa' as Address, router: '0x00000000000000000000000000000000000000dd' as Address },
  connectors: [],
  wrappedNative: null,
};
const OWNER = '0x00000000000000000000000000000000000000a1' as Address;

describe('amm-router engine', () => {
  it("routes an owner's fillable order whatever that owner's unfillable orders in the same pair ask", async () => {
    const unfillable = [1, 2].map(() => testOrder({ owner: OWNER, sellAmount: E18 / 5n, available: E18 / 5n, buyAmount: 30_000n * 10n ** 6n }));
    const fillable = testOrder({ owner: OWNER, sellAmount: E18, available: E18, buyAmount: 2_900n * 10n ** 6n });
    for (const orders of [[...unfillable, fillable], [fillable, ...unfillable]]) {
      const solutions = await new AmmRouterEngine(network).solve(testAuction(orders));
      const trades = solutions.flatMap((s) => s.trades);
      assert.deepEqual(trades.map((t) => (t.kind === 'fulfillment' ? t.order : null)), [fillable.uid], 'only the fillable order trades');
      assert.equal(trades[0]!.kind === 'fulfillment' ? trades[0]!.executedAmount : null, E18, 'filled in full');
      const [s] = solutions;
      assert.ok(s!.prices[A]! * E18 >= s!.prices[B]! * 2_900n * 10n ** 6n, 'at a price that meets its limit');
    }
  });

  it('routes two orders of one owner in one pair together at one price', async () => {
    const orders = [testOrder({ owner: OWNER, sellAmount: E18, available: E18, buyAmount: 2_900n * 10n ** 6n }), testOrder({ owner: OWNER, sellAmount: 2n * E18, available: 2n * E18, buyAmount: 5_800n * 10n ** 6n })];
    const solutions = await new AmmRouterEngine(network).solve(testAuction(orders));
    assert.equal(solutions.length, 1);
    assert.deepEqual(solutions[0]!.trades.map((t) => (t.kind === 'fulfillment' ? t.executedAmount : null)), [E18, 2n * E18]);
  });
});
