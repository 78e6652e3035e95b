import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Address, Hex } from 'viem';
import { PRICE_SCALE, type Auction, type SolvableOrder } from './auction-types.js';
import { decodeTradeFlags, type Settlement } from '../protocol/index.js';
import { CowMatcher } from './cow-matcher.js';
import { toSettlement } from './encode-solution.js';
import { scoreSolution, surplusInNative, verifySolution, withOrderHooks, type Solution } from './solution.js';
import { solvableOrder } from '../../test/fixtures/solvable-orders.js';

const A = '0x00000000000000000000000000000000000000aa' as Address; // "WETH", 18 decimals
const B = '0x00000000000000000000000000000000000000bb' as Address; // "USDC", 6 decimals
const C = '0x00000000000000000000000000000000000000cc' as Address;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

let counter = 0;
function order(partial: Partial<SolvableOrder> & Pick<SolvableOrder, 'sellToken' | 'buyToken' | 'sellAmount' | 'buyAmount'>): SolvableOrder {
  counter++;
  return solvableOrder(counter, partial);
}

function auctionOf(orders: SolvableOrder[]): Auction {
  // WETH = 1 native; USDC at 3000 USDC per WETH: 1 atom = 1e18 / 3000e6 wei
  const prices = new Map<Address, bigint>([
    [A, PRICE_SCALE],
    [B, (E18 * PRICE_SCALE) / (3000n * E6)],
    [C, PRICE_SCALE / 2n],
  ]);
  return { chainId: 31337, id: 1, block: 1, timestamp: 1, orders, prices, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' };
}

/** GPv2Settlement.computeTradeExecution over the encoded settlement: what each trade moves, or a revert reason. */
function executeLikeContract(settlement: Settlement, orders: Map<Hex, SolvableOrder>, solution: Solution): Map<Address, bigint> {
  const net = new Map<Address, bigint>();
  settlement.trades.forEach((trade, i) => {
    const o = solution.trades[i].order;
    assert.ok(orders.has(o.uid));
    const sellPrice = settlement.clearingPrices[Number(trade.sellTokenIndex)];
    const buyPrice = settlement.clearingPrices[Number(trade.buyTokenIndex)];
    assert.equal(settlement.tokens[Number(trade.sellTokenIndex)], o.sellToken);
    assert.equal(settlement.tokens[Number(trade.buyTokenIndex)], o.buyToken);
    assert.ok(trade.sellAmount * sellPrice >= trade.buyAmount * buyPrice, 'GPv2: limit price not respected');
    const flags = decodeTradeFlags(trade.flags);
    let sell: bigint;
    let buy: bigint;
    if (flags.kind === 'sell') {
      sell = flags.partiallyFillable ? trade.executedAmount : trade.sellAmount;
      buy = (sell * sellPrice + buyPrice - 1n) / buyPrice;
      assert.ok(sell <= o.remaining, 'GPv2: order filled');
    } else {
      buy = flags.partiallyFillable ? trade.executedAmount : trade.buyAmount;
      sell = (buy * buyPrice) / sellPrice;
      assert.ok(buy <= o.remaining, 'GPv2: order filled');
    }
    assert.equal(sell, solution.trades[i].executedSell, 'the contract sells what the solution says');
    assert.equal(buy, solution.trades[i].executedBuy, 'the contract buys what the solution says');
    net.set(o.sellToken, (net.get(o.sellToken) ?? 0n) + sell);
    net.set(o.buyToken, (net.get(o.buyToken) ?? 0n) - buy);
  });
  return net;
}

describe('CoW matcher', () => {
  const matcher = new CowMatcher();

  it('settles two opposite fill-or-kill orders against each other at one uniform price within both limits', async () => {
    const x = order({ sellToken: A, buyToken: B, sellAmount: E18, buyAmount: 2900n * E6 }); // sells 1 WETH for ≥ 2900 USDC
    const y = order({ sellToken: B, buyToken: A, sellAmount: 3000n * E6, buyAmount: (99n * E18) / 100n }); // sells 3000 USDC for ≥ 0.99 WETH
    const [solution] = await matcher.solve(auctionOf([x, y]));
    assert.ok(solution);
    verifySolution(solution);
    const tx = solution.trades.find((t) => t.order === x)!;
    const ty = solution.trades.find((t) => t.order === y)!;
    // each gets all of what the other sells: the price that balances both
    assert.deepEqual([tx.executedSell, tx.executedBuy], [E18, 3000n * E6]);
    assert.deepEqual([ty.executedSell, ty.executedBuy], [3000n * E6, E18]);
    const settlement = toSettlement(solution);
    assert.equal(settlement.tokens.length, 2, 'uniform prices only, no per-trade prices');
    assert.deepEqual(settlement.interactions, [[], [], []]);
    const net = executeLikeContract(settlement, new Map([[x.uid, x], [y.uid, y]]), solution);
    for (const v of net.values()) assert.equal(v, 0n);
    // surplus: 100 USDC for x and 0.01 WETH for y, in wei
    assert.equal(surplusInNative(tx, auctionOf([]).prices), (100n * E6 * auctionOf([]).prices.get(B)!) / PRICE_SCALE);
    assert.equal(surplusInNative(ty, auctionOf([]).prices), E18 / 100n);
  });

  it('finds nothing when the limits do not cross', async () => {
    const x = order({ sellToken: A, buyToken: B, sellAmount: E18, buyAmount: 3100n * E6 });
    const y = order({ sellToken: B, buyToken: A, sellAmount: 3000n * E6, buyAmount: E18 });
    assert.deepEqual(await matcher.solve(auctionOf([x, y])), []);
  });

  it('fills a partially fillable order as far as the opposite fill-or-kill order needs', async () => {
    const big = order({ sellToken: A, buyToken: B, sellAmount: 2n * E18, buyAmount: 5800n * E6, partiallyFillable: true });
    const small = order({ sellToken: B, buyToken: A, sellAmount: 3000n * E6, buyAmount: (99n * E18) / 100n });
    const [solution] = await matcher.solve(auctionOf([big, small]));
    assert.ok(solution);
    verifySolution(solution);
    const t = solution.trades.find((x) => x.order === big)!;
    assert.ok(t.executedSell > 0n && t.executedSell < 2n * E18, `partial fill ${t.executedSell}`);
    const net = executeLikeContract(toSettlement(solution), new Map([[big.uid, big], [small.uid, small]]), solution);
    for (const v of net.values()) assert.ok(v >= 0n, 'the settlement never pays out more than it takes in');
  });

  it('matches buy orders too', async () => {
    const buyer = order({ sellToken: A, buyToken: B, kind: 'buy', sellAmount: E18, buyAmount: 2900n * E6 }); // buys 2900 USDC for ≤ 1 WETH
    const seller = order({ sellToken: B, buyToken: A, sellAmount: 2900n * E6, buyAmount: (9n * E18) / 10n });
    const [solution] = await matcher.solve(auctionOf([buyer, seller]));
    assert.ok(solution);
    verifySolution(solution);
    const net = executeLikeContract(toSettlement(solution), new Map([[buyer.uid, buyer], [seller.uid, seller]]), solution);
    for (const v of net.values()) assert.ok(v >= 0n);
    assert.ok(scoreSolution(solution, auctionOf([]).prices) > 0n);
  });

  it('never proposes a trade the contract would execute differently, reject, or pay from its buffers (property)', async () => {
    const tokens = [A, B, C];
    const arbOrder = fc
      .record({
        s: fc.integer({ min: 0, max: 2 }),
        d: fc.integer({ min: 1, max: 2 }),
        c: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
        sell: fc.oneof(fc.bigInt({ min: 10n ** 15n, max: 10n ** 19n }), fc.bigInt({ min: 1n, max: 10n ** 24n })),
        // limit prices around a market (1 A = 3 B = 2 C) so that many orders cross, and some far away
        spread: fc.integer({ min: 80, max: 125 }),
        wild: fc.option(fc.bigInt({ min: 1n, max: 10n ** 24n }), { nil: undefined, freq: 8 }),
        buyKind: fc.boolean(),
        pf: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
        filled: fc.integer({ min: 0, max: 90 }),
        available: fc.option(fc.bigInt({ min: 1n, max: 10n ** 24n }), { nil: undefined, freq: 4 }),
      })
      .map((r) => {
        // mostly the pair A/B (both directions), sometimes one with C
        const sellToken = r.c ? tokens[r.s] : tokens[r.s % 2];
        const buyToken = r.c ? tokens[(r.s + r.d) % 3] : tokens[(r.s + 1) % 2];
        const kind = r.buyKind ? 'buy' : 'sell';
        const value: Record<string, bigint> = { [A]: 6n, [B]: 2n, [C]: 3n };
        const buy = r.wild ?? ((r.sell * value[sellToken]) / value[buyToken]) * BigInt(r.spread) / 100n + 1n;
        const full = kind === 'sell' ? r.sell : buy;
        const remaining = r.pf ? full - (full * BigInt(r.filled)) / 100n : full;
        return order({ sellToken, buyToken, sellAmount: r.sell, buyAmount: buy, kind, partiallyFillable: r.pf, remaining: remaining > 0n ? remaining : full, available: r.available ?? 10n ** 40n });
      });
    // the property must be exercised: count the runs that produced a solution (an always-empty answer passes trivially)
    let runs = 0;
    let solvedRuns = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(arbOrder, { minLength: 2, maxLength: 12 }), async (orders) => {
        const solutions = await matcher.solve(auctionOf(orders));
        runs += 1;
        if (solutions.some((s) => s.trades.length > 0)) solvedRuns += 1;
        for (const solution of solutions) {
          verifySolution(solution);
          const net = executeLikeContract(toSettlement(solution), new Map(orders.map((o) => [o.uid, o])), solution);
          for (const v of net.values()) assert.ok(v >= 0n, 'token deficit');
          assert.equal(solution.interactions.intra.length, 0, 'no AMM');
        }
      }),
      { numRuns: 200 },
    );
    assert.equal(runs, 200);
    assert.ok(solvedRuns >= 10, `only ${solvedRuns} of ${runs} random auctions were matched: the generator no longer produces crossing orders`);
  });
});

describe('order hooks in solutions', () => {
  const hook = (tag: string) => ({ target: '0x000000000000000000000000000000000000b00c' as Address, value: 0n, callData: `0x${tag}` as Hex });

  it('adds each traded order\'s pre-interactions before the solver\'s own and its post-interactions after, once', () => {
    const a = order({ sellToken: A, buyToken: B, sellAmount: E18, buyAmount: 2900n * E6, preInteractions: [hook('01')], postInteractions: [hook('02')], hookGas: 100_000n });
    const b = order({ sellToken: B, buyToken: A, sellAmount: 3000n * E6, buyAmount: E18 / 2n, postInteractions: [hook('03')] });
    const amm = { target: A, value: 0n, callData: '0xaa' as Hex };
    const solution: Solution = {
      solver: 't',
      trades: [{ order: a, executedSell: E18, executedBuy: 3000n * E6 }, { order: b, executedSell: 3000n * E6, executedBuy: E18 }],
      clearingPrices: new Map(),
      interactions: { pre: [amm], intra: [amm], post: [amm] },
      interactionEffects: [],
    };
    const hooked = withOrderHooks(solution);
    assert.deepEqual(hooked.interactions, { pre: [hook('01'), amm], intra: [amm], post: [amm, hook('02'), hook('03')] });
    assert.deepEqual(withOrderHooks(hooked).interactions, hooked.interactions, 'an engine that already included them gets no second copy');
    const plain = { ...solution, trades: [{ order: order({ sellToken: A, buyToken: B, sellAmount: E18, buyAmount: 1n }), executedSell: E18, executedBuy: 1n }] };
    assert.equal(withOrderHooks(plain), plain, 'no hooks: the solution as it was');
  });

  it('deducts the hooks\' gas at the gas price from the score', () => {
    const a = order({ sellToken: A, buyToken: B, sellAmount: E18, buyAmount: 2900n * E6, hookGas: 100_000n });
    const solution: Solution = { solver: 't', trades: [{ order: a, executedSell: E18, executedBuy: 3000n * E6 }], clearingPrices: new Map(), interactions: { pre: [], intra: [], post: [] }, interactionEffects: [] };
    const prices = auctionOf([a]).prices;
    const free = scoreSolution(solution, prices);
    assert.ok(free > 0n);
    assert.equal(scoreSolution(solution, prices, 7n), free - 700_000n);
  });
});
