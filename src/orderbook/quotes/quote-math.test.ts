import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { feeInSellToken } from './quote-service.js';
import { isOutsideMarket } from '../orders/order-service.js';

describe('fee in sell token', () => {
  it('is ceil(gas × gasPrice ÷ sellTokenPrice)', () => {
    // 100k gas at 1 gwei = 1e14 wei; a token worth 2 wei per atom → 5e13 atoms
    assert.equal(feeInSellToken(100_000n, 1_000_000_000n, 2), 50_000_000_000_000n);
    // USDC (6 decimals) at 3000 USD/ETH: 1 atom = 1e-6 USD = 1e18/3000/1e6 wei ≈ 333333.33 wei
    const fee = feeInSellToken(150_000n, 2_000_000_000n, 1e12 / 3000);
    // 3e14 wei = 0.0003 ETH = 0.9 USD (the float price is a hair below 1e12/3000, so the ceiling may add one atom)
    assert.ok(fee === 900_000n || fee === 900_001n, String(fee));
    // rounds up
    assert.equal(feeInSellToken(1n, 1n, 3), 1n);
  });

  it('never undercharges: fee × price ≥ gas cost', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10_000_000n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.double({ min: 1e-9, max: 1e9, noNaN: true }), (gas, gasPrice, price) => {
        const fee = feeInSellToken(gas, gasPrice, price);
        return Number(fee) * price >= Number(gas * gasPrice) * (1 - 1e-9);
      }),
    );
  });
});

describe('out-of-market check (reference §7.5)', () => {
  const quote = { id: 1, sellAmount: 1000n, buyAmount: 2000n, feeAmount: 10n, gasAmount: 0n, gasPrice: 0n, sellTokenPrice: 1, solver: 'x', verified: false };
  it('a sell order asking for no more than the quote (net of fee) is in the market', () => {
    assert.equal(isOutsideMarket('sell', 1000n, 1980n, quote), false);
    assert.equal(isOutsideMarket('sell', 1000n, 1981n, quote), true);
  });
  it('a buy order paying at least the quote plus fee is in the market', () => {
    assert.equal(isOutsideMarket('buy', 1010n, 2000n, quote), false);
    assert.equal(isOutsideMarket('buy', 1009n, 2000n, quote), true);
  });
});
