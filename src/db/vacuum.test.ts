/**
 * PGlite has no autovacuum (db/vacuum.ts): a table whose rows are replaced grows by every replacement until the
 * node vacuums it; after vacuumTables the space of the dead rows is used again. Real PGlite, the real schema, the
 * current auction replaced as the auction loop does (insert the next, delete the older).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from './connection.js';
import { REWRITTEN_TABLES, vacuumTables } from './vacuum.js';

describe('vacuumTables on PGlite', () => {
  it('lets a replaced row reuse the space of the dead ones, where without it the table grows by every replacement', async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    try {
      const db = database.db;
      const size = async () => Number((await sql<{ s: string | number }>`select pg_total_relation_size('auctions') as s`.execute(db)).rows[0]!.s);
      let id = 0;
      // 200 KB of incompressible bytes per auction, replaced 40 times
      const replace = async (times: number) => {
        for (let i = 0; i < times; i++) {
          id++;
          await sql`insert into auctions (chain_id, id, block, auction_gzip) values (1, ${id}, ${id}, decode(${randomBytes(200_000).toString('base64')}, 'base64'))`.execute(db);
          await sql`delete from auctions where chain_id = 1 and id < ${id}`.execute(db);
        }
      };
      await replace(40);
      const grown = await size();
      assert.ok(grown > 40 * 200_000, `without VACUUM every replacement stays (${grown} bytes)`);

      const took = await vacuumTables(db);
      assert.deepEqual(Object.keys(took).sort(), [...REWRITTEN_TABLES].sort(), 'each rewritten table vacuumed');
      await replace(40);
      const after = await size();
      assert.ok(after - grown < 5 * 200_000, `after VACUUM the next 40 replacements reuse the space (${grown} → ${after} bytes)`);
    } finally {
      await database.close();
    }
  });
});
