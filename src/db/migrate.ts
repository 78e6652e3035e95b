/**
 * Runs the in-code migrations with Kysely's Migrator. On Postgres (and PGlite) the migrator takes a
 * transaction-level advisory lock, so two replicas starting at once apply each migration exactly once.
 * A database that has every migration already (a restart, or a fresh PGlite copied from the migrated template)
 * is recognised by one read of the migration table, without the Migrator's catalog introspection, lock and
 * transaction: on a fresh PGlite those cost a second of the start.
 */
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { statements as orderbook } from './migrations/001_orderbook.js';
import { statements as indexer } from './migrations/002_indexer.js';
import { statements as auction } from './migrations/003_auction.js';
import { statements as simulation } from './migrations/004_simulation.js';
import { statements as affiliate } from './migrations/005_affiliate.js';
import { statements as hooks } from './migrations/006_hooks.js';
import { statements as notifications } from './migrations/007_notifications.js';
import { statements as settlementSafety } from './migrations/008_settlement_safety.js';
import { statements as perf } from './migrations/011_perf.js';
import { statements as auctionTextStorage } from './migrations/012_auction_text_storage.js';
import { statements as structure } from './migrations/009_structure.js';
import { statements as notifyHardening } from './migrations/014_notify_hardening.js';
import { statements as guard } from './migrations/015_guard.js';
import { statements as ethflow } from './migrations/018_ethflow.js';
import { statements as feeRecords } from './migrations/019_fee_records.js';
import { statements as notifyClaims } from './migrations/020_notify_claims.js';
import { statements as auctionGzip } from './migrations/021_auction_gzip.js';

function fromStatements(list: string[]): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const statement of list) await sql.raw(statement).execute(db);
    },
  };
}

/** The SQL of every migration by name (what a migrated template is keyed by: pglite-init.ts). */
export function migrationStatements(): Record<string, string[]> {
  return {
    '001_orderbook': orderbook,
    '002_indexer': indexer,
    '003_auction': auction,
    '004_simulation': simulation,
    '005_affiliate': affiliate,
    '006_hooks': hooks,
    '007_notifications': notifications,
    '008_settlement_safety': settlementSafety,
    '011_perf': perf,
    '012_auction_text_storage': auctionTextStorage,
    '009_structure': structure,
    '014_notify_hardening': notifyHardening,
    '015_guard': guard,
    '018_ethflow': ethflow,
    '019_fee_records': feeRecords,
    '020_notify_claims': notifyClaims,
    '021_auction_gzip': auctionGzip,
  };
}

/** Ordered by name; later concerns (indexer, aux) append their own files to migrationStatements. */
export function allMigrations(): Record<string, Migration> {
  return Object.fromEntries(Object.entries(migrationStatements()).map(([name, list]) => [name, fromStatements(list)]));
}

class InCodeProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations() {
    return this.migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration> = allMigrations()): Promise<string[]> {
  if (await hasExactly(db, Object.keys(migrations))) return [];
  const migrator = new Migrator({ db, provider: new InCodeProvider(migrations), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * true when the migration table (Kysely's, in the search path) lists exactly these migrations; anything else
 * (no table yet, one missing, one unknown to this code) is for the Migrator to apply or to report.
 */
async function hasExactly(db: Kysely<any>, names: string[]): Promise<boolean> {
  const { rows: present } = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!present[0]?.present) return false;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const applied = new Set(rows.map((r) => r.name));
  return applied.size === names.length && names.every((n) => applied.has(n));
}
