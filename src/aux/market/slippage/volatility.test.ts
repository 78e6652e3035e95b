/** The slippage algorithm (reference §3.5 + documented adjustments) and price impact, against hand computations. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { horizonFactor, pairVolatility, recommendSlippage, seriesStats } from './volatility.js';
import { exactInImpact, exactOutImpact } from './price-impact.js';

const T0 = 1_700_000_100_000;
const at = (i: number, stepMs = 300_000) => T0 + i * stepMs;

describe('pairVolatility', () => {
  it('σ of base/quote on shared sample times ÷ the last ratio (hand-computed)', () => {
    // ratios 100, 102, 98, 100 → mean 100, population σ = sqrt((0+4+4+0)/4) = sqrt(2)
    const base = [200, 204, 196, 300, 999].map((price, i) => ({ t: at(i), price }));
    const quote = [2, 2, 2, 3].map((price, i) => ({ t: at(i), price }));
    const v = pairVolatility({ base, quote })!;
    assert.equal(v.points, 4);
    assert.equal(v.spacingMs, 300_000);
    assert.equal(v.mean, 100);
    assert.ok(Math.abs(v.sigma - Math.SQRT2) < 1e-12);
    assert.equal(v.currentRatio, 100);
    assert.ok(Math.abs(v.relative - Math.SQRT2 / 100) < 1e-12);
    assert.equal(recommendSlippage({ volatility: v.relative }).slippageBps, Math.ceil(Math.SQRT2 * 100)); // 142
  });

  it('scales σ by √(5 min / spacing) for sparser samples', () => {
    const base = [1, 3].map((price, i) => ({ t: at(i, 1_200_000), price }));
    const quote = [1, 1].map((price, i) => ({ t: at(i, 1_200_000), price }));
    const v = pairVolatility({ base, quote })!;
    // σ = 1, spacing 20 min → × √(5/20) = 0.5; ÷ last ratio 3
    assert.ok(Math.abs(v.scaledSigma - 0.5) < 1e-12);
    assert.ok(Math.abs(v.relative - 0.5 / 3) < 1e-12);
  });

  it('is null with fewer than 2 shared points; ignores non-positive prices', () => {
    assert.equal(pairVolatility({ base: [{ t: at(0), price: 1 }], quote: [{ t: at(0), price: 1 }] }), null);
    assert.equal(pairVolatility({ base: [{ t: at(0), price: 1 }, { t: at(1), price: 2 }], quote: [{ t: at(2), price: 1 }, { t: at(3), price: 1 }] }), null);
    assert.equal(pairVolatility({ base: [{ t: at(0), price: 0 }, { t: at(1), price: 2 }], quote: [{ t: at(0), price: 1 }, { t: at(1), price: 1 }] }), null);
  });

  it('seriesStats of a flat series is 0', () => {
    assert.equal(seriesStats([{ t: at(0), price: 5 }, { t: at(1), price: 5 }])!.relative, 0);
    assert.equal(seriesStats([{ t: at(0), price: 5 }]), null);
  });
});

describe('recommendSlippage', () => {
  it('rounds up, absorbing float noise, and clamps to 0..10000', () => {
    assert.equal(recommendSlippage({ volatility: 0.0035 }).slippageBps, 35);
    assert.equal(recommendSlippage({ volatility: 0.00351 }).slippageBps, 36);
    assert.equal(recommendSlippage({ volatility: 0 }).slippageBps, 0);
    assert.equal(recommendSlippage({ volatility: 3 }).slippageBps, 10_000);
    assert.equal(recommendSlippage({ volatility: Number.NaN }).slippageBps, 10_000);
    assert.equal(recommendSlippage({ volatility: -1 }).slippageBps, 0);
  });

  it('expiration scales the volatility part by √(clamp(T, 300, 86400) / 300)', () => {
    assert.equal(horizonFactor(undefined), 1);
    assert.equal(horizonFactor(0), 1);
    assert.equal(horizonFactor(300), 1);
    assert.ok(Math.abs(horizonFactor(1200) - 2) < 1e-12);
    assert.ok(Math.abs(horizonFactor(10 ** 9) - Math.sqrt(288)) < 1e-12);
    assert.equal(recommendSlippage({ volatility: 0.001, expirationTimeInSeconds: 1200 }).slippageBps, 20);
  });

  it('adds impact and half the fee share; partially fillable halves volatility and impact', () => {
    assert.equal(recommendSlippage({ volatility: 0.001, priceImpact: 0.002 }).slippageBps, 30);
    assert.equal(recommendSlippage({ volatility: 0.001, priceImpact: 0.002, partiallyFillable: true }).slippageBps, 15);
    assert.equal(recommendSlippage({ volatility: 0.001, feeShare: 0.1 }).slippageBps, 10 + 500);
    assert.equal(recommendSlippage({ volatility: 0.001, feeShare: 0.1, partiallyFillable: true }).slippageBps, 5 + 500);
  });
});

describe('price impact', () => {
  const getAmountOut = (x: bigint, rin: bigint, rout: bigint) => (x * 997n * rout) / (rin * 1000n + x * 997n);

  it('exact in, one hop: 0.997x / (R_in + 0.997x), i.e. 1 − out / (x × spot after fee)', () => {
    const rin = 1000n * 10n ** 18n;
    const rout = 3_000_000n * 10n ** 6n;
    const x = 10n * 10n ** 18n;
    const impact = exactInImpact(x, [{ reserveIn: rin, reserveOut: rout }]);
    const out = getAmountOut(x, rin, rout);
    const spotAfterFee = (0.997 * Number(rout)) / Number(rin);
    assert.ok(Math.abs(impact - (1 - Number(out) / (Number(x) * spotAfterFee))) < 1e-9, String(impact));
    assert.ok(Math.abs(impact - (0.997 * 10) / (1000 + 0.997 * 10)) < 1e-12);
    assert.equal(exactInImpact(0n, [{ reserveIn: rin, reserveOut: rout }]), 0);
  });

  it('two hops compound; exact out is y / R_out per hop and 1 when the pool cannot pay', () => {
    const hop = { reserveIn: 10n ** 24n, reserveOut: 10n ** 24n };
    const one = exactInImpact(10n ** 22n, [hop]);
    const two = exactInImpact(10n ** 22n, [hop, hop]);
    assert.ok(two > one && two < 2 * one);
    assert.ok(Math.abs(exactOutImpact(10n ** 22n, [hop]) - 0.01) < 1e-12);
    assert.equal(exactOutImpact(10n ** 24n, [hop]), 1);
    assert.ok(exactOutImpact(10n ** 22n, [hop, hop]) > 0.01);
  });
});
