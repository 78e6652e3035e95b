/**
 * PGlite runs Postgres in single-user mode: no autovacuum. Without it the space of every updated or deleted row is
 * never reused, and the embedded node's data directory grows by what it rewrites: the current auction replaced at
 * every block (its whole row each time), the outbox rows rewritten at every claim and delivery, quotes deleted when
 * they expire. Measured: 200 replacements of a 1 MB row left a 208 MB table; after one VACUUM the next 200 added
 * 3 MB. The node vacuums these tables itself, one at a time (each holds PGlite's one session only briefly: lazy
 * VACUUM skips pages with nothing to clean). PostgreSQL's own autovacuum does this work there.
 *
 * @example
 *   await vacuumTables(db); // PGlite only
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/** The tables the node rewrites all the time (updates and deletes). */
export const REWRITTEN_TABLES = [
  'auctions',
  'notification_deliveries',
  'notification_subscriptions',
  'notification_checkpoints',
  'quotes',
  'indexer_checkpoints',
  'order_exclusions',
] as const satisfies ReadonlyArray<keyof DB>;

/** VACUUMs each table (outside any transaction); returns how long each took, in ms. */
export async function vacuumTables(db: Kysely<DB>, tables: ReadonlyArray<keyof DB> = REWRITTEN_TABLES): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  for (const table of tables) {
    const t0 = performance.now();
    await sql`vacuum ${sql.table(table)}`.execute(db);
    took[table] = Math.round(performance.now() - t0);
  }
  return took;
}
