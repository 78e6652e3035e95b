import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Address } from 'viem';
import { planHistory } from './history.js';
import {
  anchorPrices,
  applySwap,
  createRng,
  DEVNET_ASSETS,
  getAmountOut,
  impliedPricesUsd,
  planMarketStep,
  planRetailSwap,
  planSwapToPrice,
  poolPrice,
  stepReferencePrices,
  type PoolState,
} from './market-model.js';

const A = '0x00000000000000000000000000000000000000aa' as Address;
const B = '0x00000000000000000000000000000000000000bb' as Address;
const C = '0x00000000000000000000000000000000000000cc' as Address;

/** WETH/USDC at 3000 with $10M a side, WETH/COW at 6000 COW per WETH with $2M a side. */
function pools(): PoolState[] {
  return [
    {
      address: '0x0000000000000000000000000000000000000001',
      token0: { address: A, symbol: 'WETH', decimals: 18 },
      token1: { address: B, symbol: 'USDC', decimals: 6 },
      reserve0: 3333n * 10n ** 18n,
      reserve1: 9_999_000n * 10n ** 6n,
    },
    {
      address: '0x0000000000000000000000000000000000000002',
      token0: { address: A, symbol: 'WETH', decimals: 18 },
      token1: { address: C, symbol: 'COW', decimals: 18 },
      reserve0: 666n * 10n ** 18n,
      reserve1: 3_996_000n * 10n ** 18n,
    },
  ];
}

describe('market model', () => {
  it('the generator is deterministic per seed and uniform-ish', () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(xs, Array.from({ length: 1000 }, () => b()));
    assert.notDeepEqual(xs.slice(0, 10), Array.from({ length: 10 }, () => c()));
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
  });

  it('getAmountOut follows Uniswap v2 (0.3 % fee, rounding down)', () => {
    assert.equal(getAmountOut(1000n, 1_000_000n, 1_000_000n), 996n);
    assert.equal(getAmountOut(0n, 10n, 10n), 0n);
    const out = getAmountOut(10n ** 18n, 1000n * 10n ** 18n, 3_000_000n * 10n ** 6n);
    assert.equal(out, (10n ** 18n * 997n * 3_000_000n * 10n ** 6n) / (1000n * 10n ** 18n * 1000n + 10n ** 18n * 997n));
  });

  it('a swap to a target price lands on it, in both directions', () => {
    const prices = anchorPrices();
    for (const target of [2950, 3080]) {
      const pool = pools()[0]!;
      const swap = planSwapToPrice(pool, target, 1, prices);
      assert.ok(swap, 'a swap is needed');
      assert.equal(swap.tokenIn, target < poolPrice(pool) ? A : B);
      const after = poolPrice(applySwap(pool, swap));
      assert.ok(Math.abs(after / target - 1) < 5e-4, `price ${after} vs target ${target}`);
    }
    // Half-way in log terms.
    const pool = pools()[0]!;
    const half = planSwapToPrice(pool, 3100, 0.5, prices)!;
    const mid = poolPrice(applySwap(pool, half));
    assert.ok(Math.abs(mid / Math.sqrt(poolPrice(pool) * 3100) - 1) < 5e-4);
    // Nothing to do when already there.
    assert.equal(planSwapToPrice(pool, poolPrice(pool), 1, prices, 1), null);
  });

  it('retail swaps are small: a few basis points of price at most', () => {
    const rng = createRng(7);
    for (let i = 0; i < 200; i++) {
      const pool = pools()[i % 2]!;
      const swap = planRetailSwap(pool, rng, [3e-5, 1e-3]);
      const move = Math.abs(Math.log(poolPrice(applySwap(pool, swap)) / poolPrice(pool)));
      assert.ok(move < 0.0025, `move ${move}`);
      assert.ok(swap.amountIn > 0n && swap.expectedOut > 0n);
    }
  });

  it('reference prices wander without drifting away: 5-minute moves of a few bp, bounded over weeks', () => {
    const rng = createRng(1);
    let prices = anchorPrices();
    const moves: number[] = [];
    let maxDev = 0;
    for (let i = 0; i < 288 * 30; i++) {
      const next = stepReferencePrices(prices, 300, rng);
      moves.push(Math.log(next.WETH! / prices.WETH!));
      maxDev = Math.max(maxDev, Math.abs(Math.log(next.WETH! / DEVNET_ASSETS.WETH!.anchorUsd)));
      prices = next;
    }
    const sd = Math.sqrt(moves.reduce((s, m) => s + m * m, 0) / moves.length);
    assert.ok(sd > 0.0008 && sd < 0.0016, `5-minute sd ${sd}`);
    assert.ok(maxDev < 0.25, `max deviation from the anchor over 30 days: ${maxDev}`);
    assert.equal(prices.USDC, 1);
    assert.ok(Math.abs(prices.DAI! - 1) < 0.01);
  });

  it('a market step keeps pools near the references and returns exact reserves', () => {
    const rng = createRng(3);
    let state = pools();
    let prices = anchorPrices();
    let swaps = 0;
    for (let i = 0; i < 288; i++) {
      prices = stepReferencePrices(prices, 300, rng);
      const step = planMarketStep(state, prices, rng);
      let check = state;
      for (const s of step.swaps) {
        const idx = check.findIndex((p) => p.address === s.pool);
        check = check.map((p, j) => (j === idx ? applySwap(p, s) : p));
      }
      assert.deepEqual(step.pools, check);
      state = step.pools;
      swaps += step.swaps.length;
    }
    assert.ok(swaps >= 288, `swaps ${swaps}`);
    const eth = poolPrice(state[0]!);
    assert.ok(Math.abs(Math.log(eth / prices.WETH!)) < 0.01, `pool ${eth} vs reference ${prices.WETH}`);
    const implied = impliedPricesUsd(state);
    assert.ok(Math.abs(implied.COW! / prices.COW! - 1) < 0.02, `COW ${implied.COW} vs ${prices.COW}`);
  });

  it('the history plan is deterministic and spaced 5 minutes up to its end', () => {
    const a = planHistory(pools(), { hours: 2, endTimestamp: 1_000_000 });
    const b = planHistory(pools(), { hours: 2, endTimestamp: 1_000_000 });
    assert.deepEqual(a, b);
    assert.equal(a.blocks.length, 24);
    assert.equal(a.blocks.at(-1)!.timestamp, 1_000_000);
    assert.equal(a.blocks[0]!.timestamp, 1_000_000 - 23 * 300);
    assert.ok(a.blocks.every((blk) => blk.swaps.length >= 1));
    const other = planHistory(pools(), { hours: 2, endTimestamp: 1_000_000, seed: 99 });
    assert.notDeepEqual(other.pools, a.pools);
    assert.equal(planHistory(pools(), { hours: 0, endTimestamp: 1 }).blocks.length, 0);
  });
});
