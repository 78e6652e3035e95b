import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { affiliateTotals, traderRewards } from './reward-math.js';

const terms = { rewardAmount: 20, triggerVolume: 250, timeCapDays: 90, volumeCap: 1000, revenueSplitAffiliatePct: 40, revenueSplitTraderPct: 35, revenueSplitDaoPct: 25 };
const day = 86_400_000;
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * day);

describe('affiliate reward arithmetic', () => {
  it('counts one reward per trigger reached and the volume left to the next', () => {
    const r = traderRewards(terms, { firstTradeAt: t0, lastTradeAt: at(1), windowVolume: 600, totalVolume: 600 }, at(2));
    assert.deepEqual(
      { e: r.eligibleVolume, n: r.rewards, left: r.leftToNextReward, trader: r.traderEarned, aff: r.affiliateEarned, end: r.rewardsEnd?.toISOString(), active: r.active },
      { e: 600, n: 2, left: 150, trader: 14, aff: 16, end: at(90).toISOString(), active: true },
    );
  });

  it('caps eligible volume at volumeCap: nothing left to earn at the cap', () => {
    const r = traderRewards(terms, { firstTradeAt: t0, lastTradeAt: at(1), windowVolume: 5000, totalVolume: 5000 }, at(2));
    assert.equal(r.eligibleVolume, 1000);
    assert.equal(r.rewards, 4);
    assert.equal(r.canStillEarn, false);
    assert.equal(r.leftToNextReward, 0);
  });

  it('stops at the time cap: no further reward, no longer active', () => {
    const r = traderRewards(terms, { firstTradeAt: t0, lastTradeAt: at(89), windowVolume: 300, totalVolume: 900 }, at(91));
    assert.equal(r.rewards, 1);
    assert.equal(r.canStillEarn, false);
    assert.equal(r.active, false);
    assert.equal(r.leftToNextReward, 0);
  });

  it('a bound trader without trades: no end yet, a whole trigger to go, not active', () => {
    const r = traderRewards(terms, { firstTradeAt: null, lastTradeAt: null, windowVolume: 0, totalVolume: 0 }, at(1));
    assert.equal(r.rewardsEnd, null);
    assert.equal(r.leftToNextReward, 250);
    assert.equal(r.active, false);
  });

  it('inactive after 30 days without a trade inside the cap', () => {
    assert.equal(traderRewards(terms, { firstTradeAt: t0, lastTradeAt: at(1), windowVolume: 10, totalVolume: 10 }, at(32)).active, false);
  });

  it('sums the affiliate side over its traders', () => {
    const totals = affiliateTotals(
      terms,
      [
        { firstTradeAt: t0, lastTradeAt: at(1), windowVolume: 600, totalVolume: 700 },
        { firstTradeAt: t0, lastTradeAt: at(1), windowVolume: 240, totalVolume: 240 },
        { firstTradeAt: null, lastTradeAt: null, windowVolume: 0, totalVolume: 0 },
      ],
      at(2),
    );
    assert.deepEqual(totals, { totalVolume: 940, totalEarned: 16, leftToNextReward: 10, activeTraders: 2, totalTraders: 3 });
    assert.equal(affiliateTotals(terms, [], at(2)).leftToNextReward, 250);
  });
});
