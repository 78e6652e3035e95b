/**
 * Runs the in-code migrations with Kysely's Migrator. On Postgres (and PGlite) the migrator takes a
 * transaction-level advisory lock, so two replicas starting at once apply each migration exactly once.
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

function fromStatements(list: string[]): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const statement of list) await sql.raw(statement).execute(db);
    },
  };
}

/** Ordered by name; later concerns (indexer, aux) append their own files here. */
export function allMigrations(): Record<string, Migration> {
  return {
    '001_orderbook': fromStatements(orderbook),
    '002_indexer': fromStatements(indexer),
    '003_auction': fromStatements(auction),
    '004_simulation': fromStatements(simulation),
    '005_affiliate': fromStatements(affiliate),
    '006_hooks': fromStatements(hooks),
    '007_notifications': fromStatements(notifications),
    '008_settlement_safety': fromStatements(settlementSafety),
    '011_perf': fromStatements(perf),
    '012_auction_text_storage': fromStatements(auctionTextStorage),
    '009_structure': fromStatements(structure),
    '014_notify_hardening': fromStatements(notifyHardening),
    '015_guard': fromStatements(guard),
    '018_ethflow': fromStatements(ethflow),
    '019_fee_records': fromStatements(feeRecords),
    '020_notify_claims': fromStatements(notifyClaims),
  };
}

class InCodeProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations() {
    return this.migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>, migrations: Record<string, Migration> = allMigrations()): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new InCodeProvider(migrations), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
