/**
 * The external adapters the configuration selects for the affiliate program (none by default):
 * - CMS_BASE_URL + CMS_API_KEY: codes live in a Strapi-style CMS, mirrored into our database;
 * - ANALYTICS_API_KEY + ANALYTICS_{AFFILIATE,TRADER}_STATS_QUERY_ID: statistics from the analytics provider
 *   (cached 5 min per address, "no row" 1 min), our computed statistics answering when it has no row or fails.
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { Config } from '../../config/config.js';
import type { DB } from '../../db/schema.js';
import { AnalyticsAffiliateStats } from '../../providers/analytics-affiliate-stats.js';
import { cached } from '../../providers/cached.js';
import { CmsAffiliateCodes } from '../../providers/cms-affiliates.js';
import type { FetchLike } from '../../providers/provider-http.js';
import { DatabaseCodeStore } from './code-store.js';
import { MirroredCodeStore } from './mirrored-code-store.js';
import type { AffiliateCodeStore, AffiliateStats, AffiliateStatsSource, TraderStats } from '../../providers/ports/affiliate.js';
import { termsFromConfig } from './terms.js';

export interface ExternalAffiliateAdapters {
  externalCodes: AffiliateCodeStore | null;
  externalStats: AffiliateStatsSource | null;
}

type AdapterConfig = Pick<Config, 'affiliate' | 'cms' | 'analyticsApiKey' | 'outboundTimeoutMs'>;

/** Per-address cache of a statistics source (executions spend the provider's credits). */
export function cachedStats(source: AffiliateStatsSource, ttlMs: number, nullTtlMs: number): AffiliateStatsSource {
  const affiliates = cached<Address, AffiliateStats>({ name: source.name, lookup: (a) => source.affiliateStats(a) }, ttlMs, nullTtlMs, { key: (a) => a.toLowerCase() });
  const traders = cached<Address, TraderStats>({ name: source.name, lookup: (a) => source.traderStats(a) }, ttlMs, nullTtlMs, { key: (a) => a.toLowerCase() });
  return { name: source.name, affiliateStats: (a) => affiliates.lookup(a), traderStats: (a) => traders.lookup(a) };
}

export function externalAffiliateAdapters(config: AdapterConfig, db: Kysely<DB>, endpoints: { analyticsBaseUrl?: string; fetch?: FetchLike } = {}): ExternalAffiliateAdapters {
  const { cms, affiliate } = config;
  const externalCodes =
    cms.baseUrl && cms.apiKey
      ? new MirroredCodeStore(new CmsAffiliateCodes({ baseUrl: cms.baseUrl, apiKey: cms.apiKey, defaultTerms: termsFromConfig(affiliate), timeoutMs: config.outboundTimeoutMs, fetch: endpoints.fetch }), new DatabaseCodeStore(db))
      : null;
  const wantsAnalytics = config.analyticsApiKey && (affiliate.analyticsAffiliateStatsQueryId !== null || affiliate.analyticsTraderStatsQueryId !== null);
  const externalStats = wantsAnalytics
    ? cachedStats(
        new AnalyticsAffiliateStats({
          apiKey: config.analyticsApiKey!,
          affiliateStatsQueryId: affiliate.analyticsAffiliateStatsQueryId,
          traderStatsQueryId: affiliate.analyticsTraderStatsQueryId,
          baseUrl: endpoints.analyticsBaseUrl,
          timeoutMs: config.outboundTimeoutMs,
          fetch: endpoints.fetch,
        }),
        300_000,
        60_000,
      )
    : null;
  return { externalCodes, externalStats };
}
