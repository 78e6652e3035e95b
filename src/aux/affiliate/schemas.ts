/**
 * TypeBox schemas of the affiliate routes (spec §2 field names; they feed the OpenAPI document).
 */
import { Type } from '@sinclair/typebox';

export const MessageSchema = Type.Object({ message: Type.String() });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'wallet address, any case' });
const Usd = (description: string) => Type.Number({ description: `${description}, USD` });
const Iso = (description: string) => Type.String({ format: 'date-time', description });

export const AddressParams = Type.Object({ address: Address });
export const CodeParams = Type.Object({ code: Type.String({ maxLength: 64, description: 'affiliate code, any case' }) });

export const RegistrationBody = Type.Object(
  {
    walletAddress: Address,
    code: Type.String({ maxLength: 64, description: '5–20 of A-Z 0-9 - _ after trimming, any case (stored upper case)' }),
    signedMessage: Type.String({
      pattern: '^0x[0-9a-fA-F]*$',
      maxLength: 16_000,
      description: 'EIP-712 signature of AffiliateCode(address walletAddress,string code,uint256 chainId) over domain {name, version: "1"}, chainId 1, the upper-case code; ECDSA, ERC-1271 or ERC-6492',
    }),
  },
  { additionalProperties: false },
);

export const RegistrationResult = Type.Object({ code: Type.String(), createdAt: Iso('registration time') });

export const AffiliateInfo = Type.Object({
  code: Type.String(),
  createdAt: Iso('registration time (the one the registration answered)'),
  rewardAmount: Usd('reward per trigger reached, before the split'),
  triggerVolume: Usd('eligible volume per reward'),
  timeCapDays: Type.Number({ description: 'days after a trader’s first trade during which their volume counts' }),
  volumeCap: Usd('volume per trader counted at most'),
  revenueSplitAffiliatePct: Type.Number(),
  revenueSplitTraderPct: Type.Number(),
  revenueSplitDaoPct: Type.Number(),
});

export const RefCodeInfo = Type.Object({
  code: Type.String(),
  traderRewardAmount: Usd('what the trader earns per reward (rewardAmount × revenueSplitTraderPct / 100)'),
  triggerVolume: Usd('eligible volume per reward'),
  timeCapDays: Type.Number(),
  volumeCap: Usd('volume per trader counted at most'),
});

export const AffiliateStatsSchema = Type.Object({
  affiliate_address: Type.String(),
  referrer_code: Type.String(),
  total_volume: Usd('volume of the referred traders since their binding'),
  trigger_volume: Usd('volume per reward'),
  total_earned: Usd('rewards earned by the affiliate'),
  paid_out: Usd('rewards paid to the affiliate'),
  next_payout: Usd('earned and not yet paid'),
  left_to_next_reward: Usd('smallest volume a referred trader still needs for the next reward'),
  active_traders: Type.Integer({ description: 'referred traders inside their time cap with a trade in the last 30 days' }),
  total_traders: Type.Integer({ description: 'traders ever bound to the code' }),
  lastUpdatedAt: Iso('time of the newest indexed block included'),
});

export const TraderStatsSchema = Type.Object({
  trader_address: Type.String(),
  bound_referrer_code: Type.String(),
  linked_since: Iso('creation time of the order that bound the trader'),
  rewards_end: Type.Union([Iso('first trade after binding + timeCapDays'), Type.Null()], { description: 'null until the first trade after binding' }),
  eligible_volume: Usd('volume inside the time cap, capped at volumeCap'),
  left_to_next_rewards: Usd('volume still needed for the next reward (0 when no further reward can be earned)'),
  trigger_volume: Usd('volume per reward'),
  total_earned: Usd('rewards earned by the trader'),
  paid_out: Usd('rewards paid to the trader'),
  next_payout: Usd('earned and not yet paid'),
  lastUpdatedAt: Iso('time of the newest indexed block included'),
});
