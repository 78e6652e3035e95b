import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chargeFeePolicies, feeInSellToken, factorInBps, feesFromExecution, mulFactor, volumeFeeAdjustedQuote } from './fee-charge.js';
import { DEFAULT_FEE_POLICIES, FeeScheduleError, feePolicyFromJson, feePolicyJson, parseFeeSchedule, type FeePolicy } from './fee-policy.js';
import { cappedPartnerShares, isOutsideMarket, orderFeePolicies } from './fee-selection.js';

const E18 = 10n ** 18n;

// reference fees.md §10: the three worked examples, to the atom
describe('fee policies: the reference worked examples', () => {
  it('example 1: sell order, surplus fee at its cap, then the volume fee', () => {
    const order = { kind: 'sell' as const, sellAmount: E18, buyAmount: 3_000_000_000n };
    const policies: FeePolicy[] = [
      { kind: 'surplus', factor: 0.5, maxVolumeFactor: 0.0098 },
      { kind: 'volume', factor: 0.0002 },
    ];
    const prices = { sell: 3_199_040_000n, buy: 999_700_000_000_000_000n };
    const t = chargeFeePolicies({ order, prices, executed: 999_700_000_000_000_000n, fee: 300_000_000_000_000n }, policies);
    assert.deepEqual(t.protocolFees, [31_350_592n, 633_537n]);
    assert.equal(t.executed, 989_704_959_687_500_000n);
    assert.equal(t.fee, 10_295_040_312_500_000n);
    assert.equal(t.executedSell, E18);
    assert.equal(t.executedBuy, 3_167_055_871n);
    assert.deepEqual(feesFromExecution(order, t.executedSell, t.executedBuy, policies), [31_350_592n, 633_537n]);
    assert.equal(feeInSellToken(t.executedSell, t.executedBuy, prices), 10_295_040_312_500_000n);
  });

  it('example 2: buy order, price-improvement fee, then the volume fee (read back one atom lower)', () => {
    const order = { kind: 'buy' as const, sellAmount: 3_300_000_000n, buyAmount: E18 };
    const quote = { sellAmount: 3_195_000_000n, buyAmount: E18, fee: 5_000_000n };
    const policies: FeePolicy[] = [
      { kind: 'priceImprovement', factor: 0.5, maxVolumeFactor: 0.0098, quote },
      { kind: 'volume', factor: 0.0002 },
    ];
    const prices = { sell: E18, buy: 3_180_000_000n };
    const t = chargeFeePolicies({ order, prices, executed: E18, fee: 4_200_000n }, policies);
    assert.deepEqual(t.protocolFees, [7_900_000n, 638_420n]);
    assert.equal(t.executedSell, 3_192_738_420n);
    assert.equal(t.executedBuy, E18);
    assert.deepEqual(feesFromExecution(order, t.executedSell, t.executedBuy, policies), [7_899_999n, 638_419n]);
    assert.equal(feeInSellToken(t.executedSell, t.executedBuy, prices), 12_738_420n);
  });

  it('example 3: sell order with a partner volume fee, the settlement keeps exactly the fees', () => {
    const order = { kind: 'sell' as const, sellAmount: E18, buyAmount: 2_950n * E18 };
    const quote = { sellAmount: E18, buyAmount: 3_000n * E18, fee: 300_000_000_000_000n };
    const recipient = '0x' + '11'.repeat(20);
    const policies = orderFeePolicies({
      order: { ...order, sellToken: '0xaa', buyToken: '0xbb', feeAmount: 0n },
      quote,
      schedule: parseFeeSchedule(DEFAULT_FEE_POLICIES),
      partnerFees: [{ kind: 'volume', bps: 50, recipient: recipient as `0x${string}` }],
      maxPartnerFee: 0.01,
    });
    assert.deepEqual(policies, [
      { kind: 'priceImprovement', factor: 0.5, maxVolumeFactor: 0.0098, quote },
      { kind: 'volume', factor: 0.0002 },
      { kind: 'volume', factor: 0.005, recipient },
    ]);
    assert.deepEqual(feePolicyJson(policies[2]!), { volume: { factor: 0.005 } }, 'the recipient is not on the wire');
    const prices = { sell: 2_999_250_000_000_000_000_000n, buy: 999_750_000_000_000_000n };
    const t = chargeFeePolicies({ order, prices, executed: 999_750_000_000_000_000n, fee: 250_000_000_000_000n }, policies);
    assert.deepEqual(t.protocolFees, [75_000_000_000_000_000n, 599_835_000_000_000_000n, 14_992_875_825_000_000_000n]);
    assert.equal(t.executedBuy, 2_983_582_289_175_000_000_000n);
    // the pool paid 2 999.25e18 DAI for the 0.99975e18 WETH swapped: the settlement keeps the three fees
    assert.equal(2_999_250n * 10n ** 15n - t.executedBuy, 15_667_710_825_000_000_000n);
    assert.deepEqual(feesFromExecution(order, t.executedSell, t.executedBuy, policies), [75_000_000_000_000_479n, 599_834_999_999_999_040n, 14_992_875_825_000_001_439n]);
    assert.equal(feeInSellToken(t.executedSell, t.executedBuy, prices), 5_472_570_275_000_000n);
  });
});

describe('fee policies: selection and partner caps', () => {
  it('caps partner shares as upstream (cap 0.3: 1000 + 2500 bps; a third entry; cap 0; 0 bps)', () => {
    assert.deepEqual(cappedPartnerShares([0.1, 0.25], 0.3), [0.1, 0.18181818181818182]);
    assert.deepEqual(cappedPartnerShares([0.1, 0.25, 0.05], 0.3), [0.1, 0.18181818181818182, 0]);
    assert.deepEqual(cappedPartnerShares([0.1, 0.25], 0), [0, 0]);
    assert.deepEqual(cappedPartnerShares([0], 0.01), [0]);
    // the reference's list variant: 80 then 50 bps under 1 %: the second is cut to (1.01/1.008 − 1)
    const [a, b] = cappedPartnerShares([0.008, 0.005], 0.01);
    assert.equal(a, 0.008);
    assert.ok(Math.abs(b! - 0.001984126984126984) < 1e-18, `${b}`);
  });

  it('judges in/out of the market against the quote; no quote is out', () => {
    const quote = { sellAmount: E18, buyAmount: 3_000n * E18, fee: 0n };
    const sell = { kind: 'sell' as const, sellToken: '0xa', buyToken: '0xb', sellAmount: E18, feeAmount: 0n };
    assert.equal(isOutsideMarket({ ...sell, buyAmount: 2_990n * E18 }, quote), false);
    assert.equal(isOutsideMarket({ ...sell, buyAmount: 3_010n * E18 }, quote), true);
    assert.equal(isOutsideMarket({ ...sell, buyAmount: 1n }, null), true);
    const schedule = parseFeeSchedule(DEFAULT_FEE_POLICIES);
    const outside = orderFeePolicies({ order: { ...sell, buyAmount: 3_010n * E18 }, quote, schedule, partnerFees: [], maxPartnerFee: 0.01 });
    assert.deepEqual(outside, [{ kind: 'surplus', factor: 0.5, maxVolumeFactor: 0.0098 }, { kind: 'volume', factor: 0.0002 }]);
    // same-token trades skip volume policies
    const same = orderFeePolicies({ order: { ...sell, buyToken: '0xA', buyAmount: 3_010n * E18 }, quote, schedule, partnerFees: [], maxPartnerFee: 0.01 });
    assert.deepEqual(same, [{ kind: 'surplus', factor: 0.5, maxVolumeFactor: 0.0098 }]);
  });

  it('parses schedules, refuses bad ones, and round-trips the wire shape', () => {
    assert.deepEqual(parseFeeSchedule('none'), []);
    assert.throws(() => parseFeeSchedule('limit:surplus:1:0.01'), (e: Error) => e instanceof FeeScheduleError && /\[0, 1\)/.test(e.message));
    assert.throws(() => parseFeeSchedule('any:volume:0.1:0.2'), (e: Error) => e instanceof FeeScheduleError && /one factor/.test(e.message));
    assert.throws(() => parseFeeSchedule('some:volume:0.1'), (e: Error) => e instanceof FeeScheduleError && /class must be/.test(e.message));
    const pi: FeePolicy = { kind: 'priceImprovement', factor: 0.5, maxVolumeFactor: 0.0098, quote: { sellAmount: 1n, buyAmount: 2n, fee: 3n } };
    assert.deepEqual(feePolicyJson(pi), { priceImprovement: { factor: 0.5, maxVolumeFactor: 0.0098, quote: { sellAmount: '1', buyAmount: '2', fee: '3' } } });
    assert.deepEqual(feePolicyFromJson(feePolicyJson(pi)), pi);
  });

  it('multiplies factors at 18 decimals, rounding down; adjusts quotes by the volume fee', () => {
    assert.equal(mulFactor(3_167_055_871n, 0.0002 / 0.9998), 633_537n);
    assert.equal(mulFactor(123n, 1), 123n);
    assert.equal(factorInBps(0.0002), '2');
    assert.equal(factorInBps(0.00003), '0.3');
    assert.deepEqual(volumeFeeAdjustedQuote('sell', { sellAmount: 10n ** 18n, buyAmount: 3_000_000_000n, feeAmount: 1n }, 0.0002), { sellAmount: E18, buyAmount: 2_999_400_000n });
    assert.deepEqual(volumeFeeAdjustedQuote('buy', { sellAmount: 2_999_000_000n, buyAmount: E18, feeAmount: 1_000_000n }, 0.0002), { sellAmount: 2_999_600_000n, buyAmount: E18 });
  });
});
