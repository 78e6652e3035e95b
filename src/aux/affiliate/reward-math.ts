/**
 * Reward arithmetic of the affiliate program (issue 10 §3), pure. Per trader: eligible volume = volume of the
 * trades from the first trade after binding until `timeCapDays` later, capped at `volumeCap`; one reward per
 * `triggerVolume` reached; the trader earns `rewardAmount × traderPct / 100` per reward, the affiliate
 * `rewardAmount × affiliatePct / 100` per reward of each referred trader.
 *
 * @example
 *   traderRewards(terms, { firstTradeAt, lastTradeAt, windowVolume: 600, totalVolume: 600 }, now)
 *   // with triggerVolume 250: { eligibleVolume: 600, rewards: 2, leftToNextReward: 150, ... }
 */
import type { AffiliateTerms } from '../../providers/ports/affiliate.js';

const DAY_MS = 86_400_000;
/** a trader counts as active with a trade this recent (and still inside the time cap) */
export const ACTIVE_WINDOW_MS = 30 * DAY_MS;

export interface TraderVolume {
  /** first trade after binding; null: none yet */
  firstTradeAt: Date | null;
  lastTradeAt: Date | null;
  /** USD of the trades inside [firstTradeAt, firstTradeAt + timeCapDays) */
  windowVolume: number;
  /** USD of every trade after binding */
  totalVolume: number;
}

export interface TraderRewards {
  eligibleVolume: number;
  rewards: number;
  /** volume still needed for the next reward; 0 when no further reward can be earned */
  leftToNextReward: number;
  /** false once the time cap has passed or the volume cap leaves no further reward */
  canStillEarn: boolean;
  rewardsEnd: Date | null;
  active: boolean;
  traderEarned: number;
  affiliateEarned: number;
}

/** Rounds away binary noise (USD to 1e-6). */
export const usd = (v: number): number => Math.round(v * 1e6) / 1e6;

export function traderRewards(terms: AffiliateTerms, volume: TraderVolume, now: Date): TraderRewards {
  const eligibleVolume = usd(Math.min(volume.windowVolume, terms.volumeCap));
  const rewards = Math.floor(eligibleVolume / terms.triggerVolume + 1e-9);
  const maxRewards = Math.floor(terms.volumeCap / terms.triggerVolume + 1e-9);
  const rewardsEnd = volume.firstTradeAt ? new Date(volume.firstTradeAt.getTime() + terms.timeCapDays * DAY_MS) : null;
  const insideCap = rewardsEnd === null || now.getTime() < rewardsEnd.getTime();
  const canStillEarn = insideCap && rewards < maxRewards;
  const active = rewardsEnd !== null && insideCap && volume.lastTradeAt !== null && now.getTime() - volume.lastTradeAt.getTime() <= ACTIVE_WINDOW_MS;
  return {
    eligibleVolume,
    rewards,
    leftToNextReward: canStillEarn ? usd((rewards + 1) * terms.triggerVolume - eligibleVolume) : 0,
    canStillEarn,
    rewardsEnd,
    active,
    traderEarned: usd((rewards * terms.rewardAmount * terms.revenueSplitTraderPct) / 100),
    affiliateEarned: usd((rewards * terms.rewardAmount * terms.revenueSplitAffiliatePct) / 100),
  };
}

export interface AffiliateTotals {
  totalVolume: number;
  totalEarned: number;
  /** smallest volume any referred trader still needs for a reward; triggerVolume when none can earn */
  leftToNextReward: number;
  activeTraders: number;
  totalTraders: number;
}

export function affiliateTotals(terms: AffiliateTerms, traders: readonly TraderVolume[], now: Date): AffiliateTotals {
  let totalVolume = 0;
  let totalEarned = 0;
  let leftToNextReward = Number.POSITIVE_INFINITY;
  let activeTraders = 0;
  for (const trader of traders) {
    const r = traderRewards(terms, trader, now);
    totalVolume += trader.totalVolume;
    totalEarned += r.affiliateEarned;
    if (r.canStillEarn) leftToNextReward = Math.min(leftToNextReward, r.leftToNextReward);
    if (r.active) activeTraders++;
  }
  return {
    totalVolume: usd(totalVolume),
    totalEarned: usd(totalEarned),
    leftToNextReward: Number.isFinite(leftToNextReward) ? leftToNextReward : terms.triggerVolume,
    activeTraders,
    totalTraders: traders.length,
  };
}
