/**
 * Opens the database: PGlite (embedded, persisted in a directory or in memory) by default, PostgreSQL when a
 * URL is given. Both sit behind the same Kysely instance, migrations and queries.
 *
 * @example
 *   const database = await openDatabase({ kind: 'pglite', dataDir: null }); // in memory
 *   await database.db.selectFrom('orders').selectAll().execute();
 *   await database.close();
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { migrateToLatest } from './migrate.js';
import { guardPool } from './unavailable.js';
import { dropSchemaDump, preparePgliteDataDir, readSchemaDump, saveSchemaDump } from './pglite-init.js';
import type { DB } from './schema.js';

export type DatabaseTarget = { kind: 'pglite'; dataDir: string | null } | { kind: 'postgres'; url: string; poolSize?: number };

export interface Database {
  db: Kysely<DB>;
  engine: 'pglite' | 'postgres';
  /** true when the database answers a trivial query */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const INT8 = 20;
const NUMERIC = 1700;
const BYTEA = 17;

/**
 * bytea in PGlite's text format (`\x` + hex) with Node's hex codec: PGlite's own reads and writes it a byte at a
 * time (parseInt / toString(16) per byte), which made bytea columns (UIDs, addresses, signatures) the larger
 * part of reading and writing an order. Same values: a plain Uint8Array in, a plain Uint8Array out.
 */
export function parseBytea(text: string): Uint8Array {
  const b = Buffer.from(text.slice(2), 'hex');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function serializeBytea(value: unknown): string {
  if (!(value instanceof Uint8Array)) throw new Error('Invalid input for bytea type');
  return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
}

export interface OpenOptions {
  /** run the migrations (default true) */
  migrate?: boolean;
  /** where the PGlite templates live (default: node_modules/.cache/batchbook; tests give their own) */
  templateDir?: string;
}

export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<Database> {
  let db: Kysely<DB>;
  if (target.kind === 'pglite') {
    const { PGlite } = await import('@electric-sql/pglite');
    if (target.dataDir) await preparePgliteDataDir(target.dataDir, options.templateDir);
    const open = async (loadDataDir: Blob | null) => {
      const pglite = new PGlite({
        ...(target.dataDir ? { dataDir: target.dataDir } : {}),
        ...(loadDataDir ? { loadDataDir } : {}),
        parsers: { [INT8]: (v: string) => Number(v), [NUMERIC]: (v: string) => v, [BYTEA]: parseBytea },
        serializers: { [BYTEA]: serializeBytea },
      });
      await pglite.waitReady;
      return pglite;
    };
    // in memory and migrated: loaded from the migrated cluster's tarball when there is one (no initdb; the
    // migrations below find nothing to do); a tarball that cannot be loaded is dropped and made again
    const inMemory = !target.dataDir && options.migrate !== false;
    const dump = inMemory ? readSchemaDump(options.templateDir) : null;
    let pglite = dump ? await open(dump).catch(() => null) : null;
    const loaded = pglite !== null;
    if (dump && !loaded) dropSchemaDump(options.templateDir);
    pglite ??= await open(null);
    db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
    if (inMemory && !loaded) {
      try {
        await migrateToLatest(db);
      } catch (err) {
        await db.destroy().catch(() => {});
        throw err;
      }
      await saveSchemaDump(pglite, options.templateDir);
    }
  } else {
    const types = {
      getTypeParser: (oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8) return (v: string) => Number(v);
        if (oid === NUMERIC) return (v: string) => v;
        return pg.types.getTypeParser(oid, format as 'text');
      },
    };
    const pool = new pg.Pool({
      connectionString: target.url,
      max: target.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      types: types as unknown as pg.CustomTypesConfig,
    });
    // A broken idle connection must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: guardPool(pool) }) });
  }
  if (options.migrate !== false) {
    try {
      await migrateToLatest(db);
    } catch (err) {
      await db.destroy().catch(() => {});
      throw err;
    }
  }
  let closed = false;
  return {
    db,
    engine: target.kind,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
