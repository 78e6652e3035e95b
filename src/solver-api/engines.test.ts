/**
 * The built-in engines behind the Solver Engine API. The AMM router, on the auction's own pools, routes each wire
 * order on its own amounts (the API carries no owner balances), so an owner's order that cannot fill never holds
 * back its other orders. The CoW matcher answers auctions of many matched pairs with prices the settlement's
 * uint256 arithmetic can use.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFunctionData, type Address, type Hex } from 'viem';
import { ROUTER_SWAP_ABI } from '../solver/amm-router.js';
import { AmmRouterEngine, CowMatcherEngine } from './engines.js';
import { PRICE_SCALE } from '../solver/auction-types.js';
import { toSolverOrder } from './orders.js';
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

describe('built-in engines behind the API', () => {
  it("routes an owner's fillable order whatever that owner's unfillable orders in the same pair ask", async () => {
    const unfillable = [1, 2].map(() => testOrder({ owner: OWNER, sellAmount: E18 / 5n, available: E18 / 5n, buyAmount: 30_000n * 10n ** 6n }));
    const fillable = testOrder({ owner: OWNER, sellAmount: E18, available: E18, buyAmount: 2_900n * 10n ** 6n });
    for (const orders of [[...unfillable, fillable], [fillable, ...unfillable]]) {
      const solutions = await new AmmRouterEngine(network).solve(testAuction(orders));
      const trades = solutions.flatMap((s) => s.trades);
      assert.deepEqual(trades.map((t) => (t.kind === 'fulfillment' ? t.order : null)), [fillable.uid], 'only the fillable order trades');
      // filled in full: what it swaps plus its network fee (gas × gas price at WETH's price) is its sell amount
      const t = trades[0]!;
      assert.ok(t.kind === 'fulfillment' && t.fee !== undefined && t.fee > 0n && t.executedAmount + t.fee === E18, 'filled in full, network fee included');
      const [s] = solutions;
      assert.ok(s!.prices[A]! * E18 >= s!.prices[B]! * 2_900n * 10n ** 6n, 'at a price that meets its limit');
    }
  });

  it('routes two orders of one owner in one pair together at one price', async () => {
    const orders = [testOrder({ owner: OWNER, sellAmount: E18, available: E18, buyAmount: 2_900n * 10n ** 6n }), testOrder({ owner: OWNER, sellAmount: 2n * E18, available: 2n * E18, buyAmount: 5_800n * 10n ** 6n })];
    const solutions = await new AmmRouterEngine(network).solve(testAuction(orders));
    assert.equal(solutions.length, 1);
    assert.deepEqual(solutions[0]!.trades.map((t) => (t.kind === 'fulfillment' ? t.executedAmount + (t.fee ?? 0n) : null)), [E18, 2n * E18]);
  });

  it('cow-matcher answers an auction of many crossing pairs over one token set with solutions the settlement can execute', async () => {
    // 8 tokens at native prices 1..4, 400 orders of whole units with limits within ±2 % of the market: many
    // pairs match, and their prices chain through shared tokens (a forest whose prices multiply)
    const token = (i: number) => `0x${(0xa000 + i).toString(16).padStart(40, '0')}` as Address;
    const price = (i: number) => BigInt(1 + (i % 4));
    let seed = 7;
    const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const orders = Array.from({ length: 400 }, () => {
      const a = Math.floor(rnd() * 8);
      const b = (a + 1 + Math.floor(rnd() * 7)) % 8;
      const sellAmount = BigInt(1 + Math.floor(rnd() * 50)) * E18 + BigInt(Math.floor(rnd() * 1e6));
      const slack = BigInt(980 + 5 * Math.floor(rnd() * 8));
      return testOrder({ sellToken: token(a), buyToken: token(b), sellAmount, available: sellAmount, buyAmount: (sellAmount * price(a) * slack) / (price(b) * 1000n), partiallyFillable: rnd() < 0.3 });
    });
    const auction = testAuction([]);
    auction.tokens = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [token(i), { decimals: 18, symbol: `T${i}`, referencePrice: PRICE_SCALE * price(i), availableBalance: 0n, trusted: false }]));
    auction.orders = orders.map(toSolverOrder);
    auction.liquidity = [];
    // about the prices' magnitudes: no gas price, so no network fee (orders matched at their own limit could not pay one)
    auction.effectiveGasPrice = 0n;
    const solutions = await new CowMatcherEngine(network).solve(auction);
    const traded = solutions.flatMap((s) => s.trades).length;
    assert.ok(traded >= 40, `a tenth of the orders at least are matched on the wire (${traded} in ${solutions.length} solutions)`);
    for (const s of solutions) for (const p of Object.values(s.prices)) assert.ok(p * 10n ** 20n < 2n ** 256n, 'prices the settlement can multiply');
  });

  it('charges each trade its gas in the sell token and leaves out an order whose limit cannot pay it (a dust order waits)', async () => {
    // the pool: 100 WETH / 300 000 USDC; 1 gwei: a trade's gas (166 391 + its share of the swap) costs ~0.0002 WETH
    const fillable = testOrder({ sellAmount: E18, available: E18, buyAmount: 2_900n * 10n ** 6n });
    const dust = testOrder({ sellAmount: 10n ** 14n, available: 10n ** 14n, buyAmount: 1n });
    const auction = testAuction([fillable, dust]);
    auction.effectiveGasPrice = 1_000_000_000n;
    const solutions = await new AmmRouterEngine(network).solve(auction);
    const trades = solutions.flatMap((s) => s.trades);
    assert.deepEqual(trades.map((t) => (t.kind === 'fulfillment' ? t.order : null)), [fillable.uid], 'the dust order is not traded');
    const [t] = trades;
    // gas: overhead 106 391 + trade 60 000 + its swap's two interactions (approve, swap) 120 000, at 1 gwei and WETH's price 1e18
    assert.ok(t!.kind === 'fulfillment' && t!.fee === (106_391n + 60_000n + 120_000n) * 1_000_000_000n, `${t!.kind === 'fulfillment' ? t!.fee : ''}`);
    // the swap's floor is what the order is paid after its fee, below what the pool yields: the fee absorbs a
    // swap landing first (issue 19), the settlement's buffers never do
    const [s] = solutions;
    const swap = s!.interactions.find((i) => i.kind === 'custom' && i.target.toLowerCase() === network.amm.router)!;
    const { args } = decodeFunctionData({ abi: ROUTER_SWAP_ABI, data: (swap as { callData: Hex }).callData });
    const paid = (((t as { executedAmount: bigint }).executedAmount * s!.prices[A]!) + s!.prices[B]! - 1n) / s!.prices[B]!;
    assert.equal(args[1], paid, 'amountOutMin = what the order receives');
    assert.ok(args[1] < (swap as { outputs: Array<{ amount: bigint }> }).outputs[0]!.amount, 'below the pool\'s yield');
  });
});
