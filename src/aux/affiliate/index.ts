/**
 * The affiliate program, assembled: code store (our database; the external CMS when CMS_BASE_URL + CMS_API_KEY
 * are set), statistics (an external analytics query when configured, else — and as fallback — computed from our
 * own trades), the registration signature checked on every served chain, and the background sync that binds
 * traders and values trades.
 *
 * @example
 *   const affiliate = buildAffiliateProgram({ config, db, chains, logger });
 *   registerAffiliateRoutes(server, { service: affiliate.service, enabled: config.cms.enabled });
 *   void affiliate.sync.run(signal);
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { Config } from '../../config/config.js';
import type { DB } from '../../db/schema.js';
import type { ChainNetwork } from '../../chain/network.js';
import type { UsdPriceService } from '../market/prices/usd-price-service.js';
import { AffiliateService } from './affiliate-service.js';
import { AffiliateSync, type AffiliateSyncChain } from './affiliate-sync.js';
import { DatabaseCodeStore } from './code-store.js';
import { ComputedAffiliateStats } from './computed-stats.js';
import type { AffiliateCodeStore, AffiliateStatsSource } from '../../providers/ports/affiliate.js';
import { termsFromConfig } from './terms.js';

export { termsFromConfig } from './terms.js';
import { RegistrationSignature } from './registration-signature.js';

export { registerAffiliateRoutes } from './routes.js';
export { AffiliateService } from './affiliate-service.js';
export { AffiliateSync } from './affiliate-sync.js';

export interface AffiliateChain {
  network: Pick<ChainNetwork, 'name' | 'chainId' | 'client' | 'reader'>;
  usdPrices: Pick<UsdPriceService, 'usdPriceOrNull'>;
}

export interface AffiliateBuildOptions {
  config: Pick<Config, 'affiliate' | 'cms' | 'analyticsApiKey' | 'outboundTimeoutMs'>;
  db: Kysely<DB>;
  chains: AffiliateChain[];
  logger: { warn(obj: object, msg?: string): void };
  /** external adapters (built from the configuration by the caller, or by tests) */
  externalCodes?: AffiliateCodeStore | null;
  externalStats?: AffiliateStatsSource | null;
}

export interface AffiliateProgram {
  service: AffiliateService;
  sync: AffiliateSync;
  codes: DatabaseCodeStore;
  stats: ComputedAffiliateStats;
}

/** USD value of `atoms` of a token: executed amount × USD per whole token (null: no price or not an ERC-20). */
function usdValueOn(chain: AffiliateChain): AffiliateSyncChain['usdValue'] {
  return async (token: Address, atoms: bigint) => {
    const [price, metadata] = await Promise.all([chain.usdPrices.usdPriceOrNull(token), chain.network.reader.tokenMetadata(token)]);
    if (price === null || !metadata) return null;
    return (Number(atoms) / 10 ** metadata.decimals) * price;
  };
}

export function buildAffiliateProgram(options: AffiliateBuildOptions): AffiliateProgram {
  const codes = new DatabaseCodeStore(options.db);
  const stats = new ComputedAffiliateStats(options.db);
  const signature = new RegistrationSignature({
    domainName: options.config.affiliate.domainName,
    chains: options.chains.map((c) => ({ name: c.network.name, client: c.network.client })),
  });
  const service = new AffiliateService({
    codes: options.externalCodes ?? codes,
    stats: options.externalStats ? [options.externalStats, stats] : [stats],
    signature,
    terms: termsFromConfig(options.config.affiliate),
    onSourceError: (source, err) => options.logger.warn({ source, err: (err as Error).message }, 'affiliate statistics source failed; using the next'),
  });
  const sync = new AffiliateSync({
    db: options.db,
    chains: options.chains.map((c) => ({ chainId: c.network.chainId, usdValue: usdValueOn(c) })),
    logger: options.logger,
  });
  return { service, sync, codes, stats };
}
