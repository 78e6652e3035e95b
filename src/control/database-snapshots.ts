/**
 * Snapshots of the whole database for the control API: every table of the `public` schema (orders, trades,
 * auctions, competitions, notifications, the indexer's checkpoints, ...) copied into a schema of its own, with the
 * sequences' positions; restoring empties the tables and copies them back in one transaction (parents before the
 * rows that reference them), so the node's one connection (PGlite) or pool (PostgreSQL) stays as it is.
 *
 * @example
 *   const snapshots = new DatabaseSnapshots(db);
 *   await snapshots.take('1');
 *   await snapshots.restore('1');
 */
import { sql, type Kysely } from 'kysely';

const MIGRATION_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);
const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export class DatabaseSnapshots {
  constructor(private readonly db: Kysely<any>) {}

  private schemaOf(id: string): string {
    if (!/^[0-9]+$/.test(id)) throw new Error(`snapshot id ${id} is not a number`);
    return `batchbook_snapshot_${id}`;
  }

  /** The tables to copy, parents first (a table after every table it references). */
  private async tables(db: Kysely<any>): Promise<string[]> {
    const rows = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`.execute(db);
    const names = rows.rows.map((r) => r.name).filter((n) => !MIGRATION_TABLES.has(n));
    const refs = await sql<{ child: string; parent: string }>`
      select c.relname as child, p.relname as parent
      from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
      join pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = 'public'`.execute(db);
    const parents = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
    for (const { child, parent } of refs.rows) if (child !== parent) parents.get(child)?.add(parent);
    const ordered: string[] = [];
    const placed = new Set<string>();
    const place = (name: string, seen: Set<string>): void => {
      if (placed.has(name) || seen.has(name)) return;
      seen.add(name);
      for (const parent of parents.get(name) ?? []) place(parent, seen);
      placed.add(name);
      ordered.push(name);
    };
    for (const name of names) place(name, new Set());
    return ordered;
  }

  private async sequences(db: Kysely<any>): Promise<string[]> {
    const rows = await sql<{ name: string }>`select sequencename as name from pg_sequences where schemaname = 'public'`.execute(db);
    return rows.rows.map((r) => r.name);
  }

  async take(id: string): Promise<void> {
    const schema = this.schemaOf(id);
    await this.db.transaction().execute(async (trx) => {
      await sql.raw(`drop schema if exists ${quote(schema)} cascade`).execute(trx);
      await sql.raw(`create schema ${quote(schema)}`).execute(trx);
      for (const table of await this.tables(trx)) {
        await sql.raw(`create table ${quote(schema)}.${quote(table)} as table public.${quote(table)}`).execute(trx);
      }
      await sql.raw(`create table ${quote(schema)}."__sequences" (name text primary key, last_value bigint, is_called boolean)`).execute(trx);
      for (const seq of await this.sequences(trx)) {
        await sql
          .raw(`insert into ${quote(schema)}."__sequences" select '${seq.replace(/'/g, "''")}', last_value, is_called from public.${quote(seq)}`)
          .execute(trx);
      }
    });
  }

  async restore(id: string): Promise<void> {
    const schema = this.schemaOf(id);
    await this.db.transaction().execute(async (trx) => {
      const tables = await this.tables(trx);
      if (tables.length > 0) await sql.raw(`truncate ${tables.map((t) => `public.${quote(t)}`).join(', ')}`).execute(trx);
      const saved = new Set((await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = ${schema}`.execute(trx)).rows.map((r) => r.name));
      for (const table of tables) {
        // a table made after the snapshot (a migration) stays empty
        if (saved.has(table)) await sql.raw(`insert into public.${quote(table)} select * from ${quote(schema)}.${quote(table)}`).execute(trx);
      }
      const seqs = await sql<{ name: string; last_value: number; is_called: boolean }>`select name, last_value, is_called from ${sql.table(`${schema}.__sequences`)}`.execute(trx);
      for (const s of seqs.rows) await sql`select setval(${`public.${quote(s.name)}`}::regclass, ${s.last_value}, ${s.is_called})`.execute(trx);
    });
  }

  async drop(id: string): Promise<void> {
    await sql.raw(`drop schema if exists ${quote(this.schemaOf(id))} cascade`).execute(this.db);
  }
}
