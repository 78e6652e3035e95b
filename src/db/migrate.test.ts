import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase } from './connection.js';
import { allMigrations, migrateToLatest } from './migrate.js';

describe('migrations', () => {
  it('applies what is missing, then recognises an up-to-date database; a migration the code does not know is reported', async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: null }, { migrate: false });
    try {
      const all = allMigrations();
      const names = Object.keys(all).sort();
      const firstTwo = Object.fromEntries(names.slice(0, 2).map((n) => [n, all[n]!]));
      assert.deepEqual(await migrateToLatest(database.db, firstTwo), names.slice(0, 2));
      assert.deepEqual(await migrateToLatest(database.db, firstTwo), [], 'up to date: nothing applied');
      assert.deepEqual((await migrateToLatest(database.db)).sort(), names.slice(2), 'the rest, and only the rest');
      assert.deepEqual(await migrateToLatest(database.db), []);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(database.db);
      assert.equal(rows[0]!.n, names.length, 'each applied once');
      await assert.rejects(migrateToLatest(database.db, firstTwo), /migration/, 'a database ahead of the code is not taken as up to date');
    } finally {
      await database.close();
    }
  });
});
