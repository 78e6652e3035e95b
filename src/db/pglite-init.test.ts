import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSchemaTemplate, isPgliteDataDir, preparePgliteDataDir, schemaTemplateDir } from './pglite-init.js';
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
});
