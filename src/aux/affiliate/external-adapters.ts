/**
 * The external adapters the configuration selects for the affiliate program (none by default).
 */
import type { Kysely } from 'kysely';
import type { Config } from '../../config/config.js';
import type { DB } from '../../db/schema.js';
import type { AffiliateCodeStore, AffiliateStatsSource } from './ports.js';

export function externalAffiliateAdapters(_config: Config, _db: Kysely<DB>): { externalCodes: AffiliateCodeStore | null; externalStats: AffiliateStatsSource | null } {
  return { externalCodes: null, externalStats: null };
}
