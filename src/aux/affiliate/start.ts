/**
 * Starts the affiliate program inside a node (called once from the composition root): builds it with the
 * external adapters the configuration selects, registers its routes, and runs its sync loop on the replica that
 * holds the `batchbook:affiliate` leadership (every replica when the database is not a shared PostgreSQL).
 * Returns the function that stops the loop.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.js';
import type { DB } from '../../db/schema.js';
import { runAsLeader } from '../../db/leadership.js';
import type { HttpServer } from '../../http/server.js';
import { buildAffiliateProgram, type AffiliateChain } from './index.js';
import { externalAffiliateAdapters } from './external-adapters.js';
import { registerAffiliateRoutes } from './routes.js';

export interface StartAffiliateOptions {
  server: HttpServer;
  config: Config;
  db: Kysely<DB>;
  chains: AffiliateChain[];
  logger: Logger;
  signal: AbortSignal;
  /** shared PostgreSQL URL (leadership), null otherwise */
  databaseUrl: string | null;
}

export async function startAffiliateProgram(options: StartAffiliateOptions): Promise<() => Promise<void>> {
  const logger = options.logger.child({ module: 'affiliate' });
  const program = buildAffiliateProgram({ config: options.config, db: options.db, chains: options.chains, logger, ...externalAffiliateAdapters(options.config, options.db, { analyticsBaseUrl: options.config.analyticsApiUrl ?? undefined }) });
  registerAffiliateRoutes(options.server, { service: program.service, enabled: options.config.cms.enabled });
  if (!options.config.cms.enabled) return async () => {};
  const running = runAsLeader(
    { url: options.databaseUrl, name: 'batchbook:affiliate', logger: { info: (m: string) => logger.info(m), warn: (o: object, m?: string) => logger.warn(o, m) }, signal: options.signal },
    (signal) => program.sync.run(signal),
  ).catch((err) => logger.error({ err }, 'affiliate sync stopped'));
  return async () => {
    await running;
  };
}
