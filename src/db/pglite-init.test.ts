import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSchemaTemplate, isPgliteDataDir, preparePgliteDataDir, readSchemaDump, schemaDumpFile, schemaTemplateDir } from './pglite-init.js';
import { PGlite } from '@electric-sql/pglite';
import { migrateToLatest } from './migrate.js';
import { sql } from 'kysely';
import { openDatabase } from './connection.js';

describe('PGlite data directories', () => {
  it('the first is made by initdb and kept as the template; the next is a copy of it; both open and migrate', async () => {
    const base = mkdtempSync(join(tmpdir(), 'bb-pglite-'));
    try {
      const template = join(base, 'template');
      const first = join(base, 'first');
      await preparePgliteDataDir(first, template);
      assert.ok(isPgliteDataDir(first) && isPgliteDataDir(template), 'initialised, and the template kept');

      writeFileSync(join(template, 'copied-from-template'), 'yes');
      const second = join(base, 'second');
      await preparePgliteDataDir(second, template);
      assert.ok(existsSync(join(second, 'copied-from-template')), 'the second directory is a copy of the template');

      for (const dataDir of [first, second]) {
        const database = await openDatabase({ kind: 'pglite', dataDir });
        try {
          assert.equal(await database.ping(), true);
          const rows = await database.db.selectFrom('orders').select('uid').execute();
          assert.deepEqual(rows, [], `${dataDir} is migrated and empty`);
        } finally {
          await database.close();
        }
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('the migrated template: a fresh directory copied from it is migrated already and holds only the postgres database', async () => {
    const base = mkdtempSync(join(tmpdir(), 'bb-pglite-schema-'));
    try {
      const template = join(base, 'template');
      assert.equal(await ensureSchemaTemplate(template), schemaTemplateDir(template));
      const dataDir = join(base, 'fresh');
      await preparePgliteDataDir(dataDir, template);
      assert.ok(isPgliteDataDir(dataDir));
      assert.ok(!existsSync(join(dataDir, 'base', '1')) && !existsSync(join(dataDir, 'base', '4')), 'template0 and template1 are not copied');
      const database = await openDatabase({ kind: 'pglite', dataDir }, { migrate: false });
      try {
        assert.deepEqual(await migrateToLatest(database.db), [], 'nothing left to migrate');
        const { rows } = await sql<{ datname: string }>`select datname from pg_database order by datname`.execute(database.db);
        assert.deepEqual(rows.map((r) => r.datname), ['postgres']);
        assert.deepEqual(await database.db.selectFrom('orders').select('uid').execute(), []);
      } finally {
        await database.close();
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('in memory: the first open saves the migrated cluster as a tarball, the next ones load it, a broken one is made again', async () => {
    const base = mkdtempSync(join(tmpdir(), 'bb-pglite-dump-'));
    const template = join(base, 'template');
    const tables = async (database: Awaited<ReturnType<typeof openDatabase>>) =>
      (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' order by 1`.execute(database.db)).rows.map((r) => r.name);
    try {
      const first = await openDatabase({ kind: 'pglite', dataDir: null }, { templateDir: template });
      const schema = await tables(first);
      try {
        assert.ok(schema.includes('orders'), 'migrated');
        const { rows } = await sql<{ datname: string }>`select datname from pg_database order by datname`.execute(first.db);
        assert.deepEqual(rows.map((r) => r.datname), ['postgres'], 'like the migrated template: only the postgres database');
      } finally {
        await first.close();
      }
      assert.ok(existsSync(schemaDumpFile(template)), 'the tarball was saved');

      // mark the tarball: a database that shows the mark was loaded from it, not made by initdb and the migrations
      const marked = new PGlite({ loadDataDir: readSchemaDump(template)! });
      await marked.exec('create table loaded_from_dump (x int)');
      writeFileSync(schemaDumpFile(template), Buffer.from(await (await marked.dumpDataDir('none')).arrayBuffer()));
      await marked.close();
      const second = await openDatabase({ kind: 'pglite', dataDir: null }, { templateDir: template });
      try {
        assert.deepEqual(await tables(second), [...schema, 'loaded_from_dump'].sort());
        assert.deepEqual(await migrateToLatest(second.db), [], 'nothing left to migrate');
        await second.db.insertInto('indexer_checkpoints').values({ chain_id: 1, name: 'main', block_number: 7, block_hash: new Uint8Array(32) }).execute();
      } finally {
        await second.close();
      }
      const third = await openDatabase({ kind: 'pglite', dataDir: null }, { templateDir: template });
      try {
        assert.deepEqual(await third.db.selectFrom('indexer_checkpoints').selectAll().execute(), [], 'each database starts empty: what one wrote is not in the tarball');
      } finally {
        await third.close();
      }

      writeFileSync(schemaDumpFile(template), 'not a tarball');
      const fourth = await openDatabase({ kind: 'pglite', dataDir: null }, { templateDir: template });
      try {
        assert.deepEqual(await tables(fourth), schema, 'made by initdb and the migrations');
      } finally {
        await fourth.close();
      }
      assert.ok((readSchemaDump(template)?.size ?? 0) > 1_000_000, 'and the broken tarball replaced by a good one');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
