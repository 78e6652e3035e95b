/**
 * The affiliate program, assembled: code store (our database; the external CMS when CMS_BASE_URL + CMS_API_KEY
 * are set), statistics (an external analytics query when configured, else — and as fallback — computed from our
 * own trades), the registration signature checked on the chains that count for rewards, and the background sync
 * that binds traders and values trades of those chains.
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
import { TradeValuation } from './trade-valuation.js';

export { termsFromConfig } from './terms.js';
import { RegistrationSignature } from './registration-signature.js';

export { registerAffiliateRoutes } from './routes.js';
export { AffiliateService } from './affiliate-service.js';
export { AffiliateSync } from './affiliate-sync.js';

export interface AffiliateChain {
  network: Pick<ChainNetwork, 'name' | 'chainId' | 'client' | 'reader' | 'devnet' | 'amm' | 'wrappedNative' | 'connectors'>;
  usdPrices: Pick<UsdPriceService, 'usdPriceOrNull'>;
}

/**
 * The chains whose trades count for rewards (and on which a registration signature is checked): those listed in
 * AFFILIATE_CHAINS, else every real chain served; the devnet — whose keys are public and whose tokens are play
 * money — only when it is the only chain, so the program can be tried on a devnet-only node.
 */
export function countingChains<C extends { network: { chainId: number; devnet: unknown } }>(chains: C[], configured: number[] | null): C[] {
  const real = chains.filter((c) => !c.network.devnet);
  if (configured === null) return real.length > 0 ? real : chains;
  for (const id of configured) {
    const chain = chains.find((c) => c.network.chainId === id);
    if (!chain) throw new Error(`AFFILIATE_CHAINS: chain ${id} is not served by this node`);
    if (chain.network.devnet && real.length > 0) throw new Error(`AFFILIATE_CHAINS: the devnet (${id}) cannot count beside real chains`);
  }
  return chains.filter((c) => configured.includes(c.network.chainId));
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

/** USD value of a trade: the auction's native price of its block, with the chain's liquidity floor (trade-valuation.ts). */
function usdValueOn(chain: AffiliateChain, db: Kysely<DB>, affiliate: Config['affiliate']): AffiliateSyncChain['usdValue'] {
  const valuation = new TradeValuation({
    db,
    network: chain.network,
    usdPrices: chain.usdPrices,
    minLiquidityUsd: affiliate.minLiquidityUsdByChain[chain.network.chainId] ?? affiliate.minLiquidityUsd,
  });
  return (token: Address, atoms: bigint, trade) => valuation.usdValue(token, atoms, trade);
}

export function buildAffiliateProgram(options: AffiliateBuildOptions): AffiliateProgram {
  const counting = countingChains(options.chains, options.config.affiliate.chains);
  const codes = new DatabaseCodeStore(options.db);
  const stats = new ComputedAffiliateStats(options.db, counting.map((c) => c.network.chainId));
  const signature = new RegistrationSignature({
    domainName: options.config.affiliate.domainName,
    chains: counting.map((c) => ({ name: c.network.name, client: c.network.client })),
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
    chains: counting.map((c) => ({ chainId: c.network.chainId, usdValue: usdValueOn(c, options.db, options.config.affiliate) })),
    logger: options.logger,
  });
  return { service, sync, codes, stats };
}
