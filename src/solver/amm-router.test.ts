/**
 * The AMM router's uniform directed clearing prices (issue 14, point 6): orders on the same directed pair are
 * routed as one aggregate swap and clear at one price, derived by the settlement from one price pair; the
 * swap's minimum out leaves the slippage the score assumes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFunctionData, type Address } from 'viem';
import { PRICE_SCALE, type Auction, type SolvableOrder } from './auction-types.js';
import type { ChainClient } from '../chain/client.js';
import { AmmRouter, candidateOrder, ROUTER_SWAP_ABI } from './amm-router.js';
import { toSettlement } from './encode-solution.js';
import { nonUniformDirectedPair, verifySolution } from './solution.js';
import { PoolSnapshot } from './uniswap-v2-pools.js';
import { solvableOrder } from '../../test/fixtures/solvable-orders.js';

const A = '0x00000000000000000000000000000000000000aa' as Address; // "WETH"
const B = '0x00000000000000000000000000000000000000bb' as Address; // "USDC" (6 decimals)
const ROUTER = '0x00000000000000000000000000000000000000f1' as Address;
const SETTLEMENT = '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as Address;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

let counter = 0;
function order(partial: Partial<SolvableOrder> & Pick<SolvableOrder, 'sellAmount' | 'buyAmount'>): SolvableOrder {
  counter++;
  return solvableOrder(counter, { sellToken: A, buyToken: B, ...partial });
}

const auctionOf = (orders: SolvableOrder[]): Auction => ({
  chainId: 31337,
  id: 1,
  block: 1,
  timestamp: 1,
  orders,
  prices: new Map([[A, PRICE_SCALE], [B, (E18 * PRICE_SCALE) / (3000n * E6)]]),
  settlement: SETTLEMENT,
});

// 100 WETH / 300,000 USDC: a 10 WETH sale moves the price by several percent
const pools = () => new PoolSnapshot(new Map([[`${A}-${B}`, { address: A, token0: A, reserve0: 100n * E18, reserve1: 300_000n * E6 }]]));
// the router only reads pools through `solve`; `solveOn` is given the reserves, so no client is called
const router = (slippageBps = 50) => new AmmRouter({ client: {} as ChainClient, factory: A, router: ROUTER, settlement: SETTLEMENT, connectors: [], slippageBps });

describe('AMM router: one price per directed pair', () => {
  it('routes two sell orders and a buy order of one directed pair as one swap, at one price the settlement derives from one price pair', () => {
    const first = order({ sellAmount: 10n * E18, buyAmount: 20_000n * E6 });
    const second = order({ sellAmount: 5n * E18, buyAmount: 10_000n * E6 });
    const buyer = order({ kind: 'buy', sellAmount: 2n * E18, buyAmount: 4_000n * E6 });
    const [solution] = router().solveOn(auctionOf([first, second, buyer]), pools());
    assert.ok(solution);
    assert.equal(solution.trades.length, 3);
    verifySolution(solution);
    assert.equal(nonUniformDirectedPair(solution.trades), null);
    // one price: buy/sell the same for every trade (within one atom of rounding)
    const [t1, t2, t3] = solution.trades;
    assert.equal(t1.executedSell, 10n * E18);
    assert.equal(t2.executedSell, 5n * E18);
    assert.equal(t3.executedBuy, 4_000n * E6);
    const rate = (t: { executedSell: bigint; executedBuy: bigint }) => (t.executedBuy * E18) / t.executedSell;
    assert.ok(rate(t1) - rate(t2) <= 1n && rate(t2) - rate(t1) <= 1n, `${rate(t1)} vs ${rate(t2)}`);

    // one swap of the aggregate, its minimum out 0.5 % under what the pool yields, and the trades paid from it
    const swaps = solution.interactions.intra.filter((i) => i.target === ROUTER);
    assert.equal(swaps.length, 1, 'the aggregate is routed once');
    const swap = decodeFunctionData({ abi: ROUTER_SWAP_ABI, data: swaps[0]!.callData });
    assert.equal(swap.functionName, 'swapExactTokensForTokens');
    const [amountIn, minOut] = swap.args as readonly [bigint, bigint, readonly Address[], Address, bigint];
    assert.equal(amountIn, t1.executedSell + t2.executedSell + t3.executedSell, 'the swap sells exactly what the orders bring');
    const out = pools().amountOut([A, B], amountIn)!;
    assert.equal(minOut, (out * 9950n) / 10_000n, 'amountOutMin allows the 0.5 % slippage');
    assert.ok(t1.executedBuy + t2.executedBuy + t3.executedBuy <= minOut, 'the orders are paid from the minimum out');

    // the settlement derives all three trades from one price pair
    const settlement = toSettlement(solution);
    const pairs = new Set(settlement.trades.map((t) => `${t.sellTokenIndex}-${t.buyTokenIndex}`));
    assert.equal(pairs.size, 1, 'one price pair for the directed pair');
    assert.equal(settlement.tokens.length, 2);
  });

  it('leaves out an order whose limit the aggregate price misses, and prices the rest again', () => {
    const fine = order({ sellAmount: 10n * E18, buyAmount: 20_000n * E6 });
    const greedy = order({ sellAmount: 10n * E18, buyAmount: 29_000n * E6 });
    const [solution] = router().solveOn(auctionOf([greedy, fine]), pools());
    assert.deepEqual(solution!.trades.map((t) => t.order.uid), [fine.uid]);
    verifySolution(solution!);
  });

  it('uses as much of the slippage allowance as the limit leaves room for (a tight market order is still routed)', () => {
    const out = pools().amountOut([A, B], E18)!;
    const tight = order({ sellAmount: E18, buyAmount: (out * 9_990n) / 10_000n }); // room for 0.1 %, not 0.5 %
    const [solution] = router(50).solveOn(auctionOf([tight]), pools());
    assert.ok(solution, 'routed');
    verifySolution(solution);
    const swap = decodeFunctionData({ abi: ROUTER_SWAP_ABI, data: solution.interactions.intra.find((i) => i.target === ROUTER)!.callData });
    const minOut = swap.args[1] as bigint;
    assert.ok(minOut >= tight.buyAmount && minOut < out, `${minOut} between the limit ${tight.buyAmount} and the market ${out}`);
  });

  it('rejects a solution that gives two orders of one directed pair different prices', () => {
    const x = order({ sellAmount: E18, buyAmount: 2_000n * E6 });
    const y = order({ sellAmount: E18, buyAmount: 2_000n * E6 });
    const split = [
      { order: x, executedSell: E18, executedBuy: 2_950n * E6 },
      { order: y, executedSell: E18, executedBuy: 2_900n * E6 },
    ];
    assert.deepEqual(nonUniformDirectedPair(split), [x.uid, y.uid]);
    assert.throws(
      () => verifySolution({ solver: 't', trades: split, clearingPrices: new Map(), interactions: { pre: [], intra: [], post: [] }, interactionEffects: [{ token: B, delta: 6_000n * E6 }, { token: A, delta: -2n * E18 }] }),
      /same directed pair at different prices/,
    );
  });

  it('takes candidates by how generous their limit is, then by age, not by age alone (issue 19)', () => {
    const X = '0x00000000000000000000000000000000000000a1' as Address;
    const Y = '0x00000000000000000000000000000000000000b2' as Address;
    const prices = new Map<Address, bigint>([[X, PRICE_SCALE], [Y, PRICE_SCALE]]);
    // at one to one, the oldest asks for 99 % of its value, a newer one for 90 %, another as much as the first
    const tight = solvableOrder(1, { sellToken: X, buyToken: Y, sellAmount: 100n, buyAmount: 99n });
    const generous = solvableOrder(2, { sellToken: X, buyToken: Y, sellAmount: 100n, buyAmount: 90n });
    const sameAsFirst = solvableOrder(3, { sellToken: X, buyToken: Y, sellAmount: 200n, buyAmount: 198n });
    const unpriced = solvableOrder(0, { sellToken: X, buyToken: '0x00000000000000000000000000000000000000c3', sellAmount: 100n, buyAmount: 1n });
    const sorted = [tight, unpriced, sameAsFirst, generous].sort(candidateOrder(prices));
    assert.deepEqual(sorted.map((o) => o.created), [2, 1, 3, 0]);
  });
});

describe('AMM router: issue 19 minors', () => {
  it('pays the orders what the pool yields by default (no slippage kept in the settlement): the swap demands exactly that', () => {
    const seller = order({ sellAmount: E18, buyAmount: 2_000n * E6 });
    const r = new AmmRouter({ client: {} as ChainClient, factory: A, router: ROUTER, settlement: SETTLEMENT, connectors: [] });
    const [solution] = r.solveOn(auctionOf([seller]), pools());
    assert.ok(solution);
    const swap = decodeFunctionData({ abi: ROUTER_SWAP_ABI, data: solution.interactions.intra.find((i) => i.target === ROUTER)!.callData });
    const [amountIn, minOut] = swap.args as readonly [bigint, bigint, readonly Address[], Address, bigint];
    const out = pools().amountOut([A, B], amountIn)!;
    // a front-running swap that moves the pool makes the settlement revert rather than spend its buffers
    assert.equal(minOut, out, 'amountOutMin is what the pool yields now');
    const paid = solution.trades[0]!.executedBuy;
    assert.ok(out - paid <= 4n, `paid ${paid} of ${out}: only rounding atoms stay`);
  });

  it('routes a buy order paying in a coarser token than it buys (WETH bought with USDC)', () => {
    const buyer = order({ kind: 'buy', sellToken: B, buyToken: A, sellAmount: 3_200n * E6, buyAmount: E18 });
    for (const slippage of [0, 50]) {
      const [solution] = router(slippage).solveOn(auctionOf([buyer]), pools());
      assert.ok(solution, `routed with slippage ${slippage}`);
      verifySolution(solution);
      const [t] = solution.trades;
      assert.equal(t!.executedBuy, E18);
      const needed = pools().amountIn([B, A], E18)!;
      assert.ok(t!.executedSell >= needed, `${t!.executedSell} pays at least the ${needed} the pool asks`);
      // without a slippage allowance it pays what the pool asks, give or take a few USDC atoms of rounding
      if (slippage === 0) assert.ok(t!.executedSell <= needed + 10n, `${t!.executedSell} vs ${needed}`);
    }
  });
});
