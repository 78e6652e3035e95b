/** The configured reward terms, as copied onto each new code. */
import type { AffiliateConfig } from '../../config/config.js';
import type { AffiliateTerms } from '../../providers/ports/affiliate.js';

export function termsFromConfig(c: AffiliateConfig): AffiliateTerms {
  return {
    rewardAmount: c.rewardAmount,
    triggerVolume: c.triggerVolume,
    timeCapDays: c.timeCapDays,
    volumeCap: c.volumeCap,
    revenueSplitAffiliatePct: c.splitAffiliatePct,
    revenueSplitTraderPct: c.splitTraderPct,
    revenueSplitDaoPct: c.splitDaoPct,
  };
}
