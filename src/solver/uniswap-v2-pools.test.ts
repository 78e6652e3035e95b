import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Address } from 'viem';
import { getAmountIn, getAmountOut, PoolSnapshot } from './uniswap-v2-pools.js';

const A = '0x00000000000000000000000000000000000000aa' as Address;
const B = '0x00000000000000000000000000000000000000bb' as Address;
const C = '0x00000000000000000000000000000000000000cc' as Address;

describe('Uniswap-V2 amounts', () => {
  it('match the V2 library on a worked example (0.3 % fee)', () => {
    // 1 in against reserves 100/200 (18 decimals): 1e18 × 997 × 200e18 / (100e18 × 1000 + 1e18 × 997)
    assert.equal(getAmountOut(10n ** 18n, 100n * 10n ** 18n, 200n * 10n ** 18n), 1974316068794122597n);
    assert.equal(getAmountIn(1974316068794122597n, 100n * 10n ** 18n, 200n * 10n ** 18n), 10n ** 18n);
    assert.equal(getAmountIn(200n, 100n, 200n), null, 'a pool cannot pay out all it holds');
  });

  it('buying what getAmountIn asks for yields at least the amount wanted (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1000n, max: 10n ** 30n }), fc.bigInt({ min: 1000n, max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10n ** 30n }), (rIn, rOut, want) => {
        const needed = getAmountIn(want, rIn, rOut);
        if (needed === null) return want >= rOut;
        return getAmountOut(needed, rIn, rOut) >= want;
      }),
    );
  });

  it('prices trades one after the other on a local copy of the reserves', () => {
    const pools = new PoolSnapshot(
      new Map([
        [`${A}-${B}`, { address: A, token0: A, reserve0: 1000n * 10n ** 18n, reserve1: 3_000_000n * 10n ** 6n }],
        [`${B}-${C}`, { address: B, token0: B, reserve0: 3_000_000n * 10n ** 6n, reserve1: 3_000_000n * 10n ** 18n }],
      ]),
    );
    const first = pools.amountOut([A, B, C], 10n ** 18n)!;
    assert.ok(first > 0n);
    pools.applyExactIn([A, B, C], 10n ** 18n);
    const second = pools.amountOut([A, B, C], 10n ** 18n)!;
    assert.ok(second < first, 'the second trade through the same pools gets a worse price');
    const cost = pools.amountIn([C, B, A], 10n ** 18n)!;
    pools.applyExactOut([C, B, A], 10n ** 18n);
    assert.ok(pools.amountIn([C, B, A], 10n ** 18n)! > cost);
    assert.equal(pools.amountOut([A, C], 1n), null, 'no pool, no route');
  });
});
