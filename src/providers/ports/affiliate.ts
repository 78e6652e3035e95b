/**
 * What the affiliate service needs, as ports: the code store (our database, or an external Strapi-style CMS)
 * and the statistics source (computed from our own trades, or an external analytics query).
 */
import type { Address } from 'viem';

/** Reward terms, copied onto a code when it is registered (spec §2 "Affiliate information"). */
export interface AffiliateTerms {
  rewardAmount: number;
  triggerVolume: number;
  timeCapDays: number;
  volumeCap: number;
  revenueSplitAffiliatePct: number;
  revenueSplitTraderPct: number;
  revenueSplitDaoPct: number;
}

export interface AffiliateCode extends AffiliateTerms {
  /** upper case */
  code: string;
  /** lowercase */
  walletAddress: Address;
  enabled: boolean;
  createdAt: Date;
}

export interface NewAffiliateCode {
  code: string;
  walletAddress: Address;
  signedMessage: `0x${string}`;
  terms: AffiliateTerms;
}

export type RegisterOutcome = { ok: true; code: AffiliateCode } | { ok: false; conflict: 'code' | 'wallet' };

export interface AffiliateCodeStore {
  readonly name: string;
  /** atomically: both the code and the wallet must be free */
  register(input: NewAffiliateCode): Promise<RegisterOutcome>;
  byWallet(wallet: Address): Promise<AffiliateCode | null>;
  byCode(code: string): Promise<AffiliateCode | null>;
}

/** spec §2 "Affiliate statistics" */
export interface AffiliateStats {
  affiliate_address: string;
  referrer_code: string;
  total_volume: number;
  trigger_volume: number;
  total_earned: number;
  paid_out: number;
  next_payout: number;
  left_to_next_reward: number;
  active_traders: number;
  total_traders: number;
  lastUpdatedAt: string;
}

/** spec §2 "Trader statistics" */
export interface TraderStats {
  trader_address: string;
  bound_referrer_code: string;
  linked_since: string;
  /** null until the trader's first trade after binding (the time cap starts there) */
  rewards_end: string | null;
  eligible_volume: number;
  left_to_next_rewards: number;
  trigger_volume: number;
  total_earned: number;
  paid_out: number;
  next_payout: number;
  lastUpdatedAt: string;
}

export interface AffiliateStatsSource {
  readonly name: string;
  /** null: the wallet has no code (or the source has no row for it) */
  affiliateStats(wallet: Address): Promise<AffiliateStats | null>;
  /** null: the trader is not bound to a code (or the source has no row for it) */
  traderStats(trader: Address): Promise<TraderStats | null>;
}
