import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { engines, createTestPostgres } from '../../test/fixtures/databases.js';
import { skipUnless } from '../../test/fixtures/required-services.js';
import { openDatabase, parseBytea, serializeBytea, type Database } from './connection.js';
import { allMigrations, migrateToLatest } from './migrate.js';
import { fromNumeric, toBytes, toHex, toNumeric } from './codec.js';

const MAX_U256 = 2n ** 256n - 1n;

for (const fixture of await engines()) {
  describe(`storage on ${fixture.engine}`, { skip: fixture.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    before(async () => {
      database = await fixture.open();
    });
    after(async () => {
      await database.dispose();
    });

    it('answers ping and has every table after migration', async () => {
      assert.equal(await database.ping(), true);
      const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(database.db);
      const names = new Set(tables.rows.map((r) => r.table_name));
      for (const t of ['orders', 'quotes', 'order_quotes', 'order_events', 'app_data', 'trades', 'settlements', 'invalidations', 'presignature_events', 'auctions', 'solver_competitions', 'indexer_checkpoints']) {
        assert.ok(names.has(t), `missing table ${t}`);
      }
    });

    it('running migrations again applies nothing', async () => {
      assert.deepEqual(await migrateToLatest(database.db), []);
    });

    it('round-trips uint256 extremes through numeric(78,0) and bytes through bytea', async () => {
      const uid = toBytes('0x' + 'ab'.repeat(56));
      await database.db
        .insertInto('trades')
        .values({
          chain_id: 1, block_number: 10, log_index: 1, order_uid: uid, owner: toBytes('0x' + '11'.repeat(20)),
          sell_token: toBytes('0x' + '22'.repeat(20)), buy_token: toBytes('0x' + '33'.repeat(20)),
          sell_amount: toNumeric(MAX_U256), buy_amount: toNumeric(0n), fee_amount: toNumeric(2n ** 255n),
          tx_hash: toBytes('0x' + 'cd'.repeat(32)), block_timestamp: null,
        })
        .execute();
      const row = await database.db.selectFrom('trades').selectAll().where('chain_id', '=', 1).executeTakeFirstOrThrow();
      assert.equal(fromNumeric(row.sell_amount), MAX_U256);
      assert.equal(fromNumeric(row.fee_amount), 2n ** 255n);
      assert.equal(fromNumeric(row.buy_amount), 0n);
      assert.equal(toHex(row.order_uid), '0x' + 'ab'.repeat(56));
      assert.equal(typeof row.block_number, 'number');
      const sum = await database.db.selectFrom('trades').select((eb) => eb.fn.sum<string>('sell_amount').as('s')).executeTakeFirstOrThrow();
      assert.equal(fromNumeric(sum.s), MAX_U256);
    });

    it('rejects a uint256 overflow and a wrong-length UID at the database', async () => {
      await assert.rejects(
        database.db.insertInto('app_data').values({ contract_app_data: toBytes('0x1234'), full_app_data: Buffer.from('{}') }).execute(),
      );
      await assert.rejects(sql`select ${toNumeric(MAX_U256 * 10n)}::numeric(78,0)`.execute(database.db));
    });

    it('rolls back a failed transaction and keeps serving queries', async () => {
      await assert.rejects(
        database.db.transaction().execute(async (tx) => {
          await tx.insertInto('app_data').values({ contract_app_data: toBytes('0x' + '01'.repeat(32)), full_app_data: Buffer.from('{}') }).execute();
          throw new Error('boom');
        }),
        /boom/,
      );
      const rows = await database.db.selectFrom('app_data').selectAll().execute();
      assert.equal(rows.length, 0);
      // a statement issued outside while a transaction holds an uncommitted row must neither see that row nor
      // deadlock: PostgreSQL runs it on another connection at once (isolation: it sees nothing yet), PGlite
      // queues it behind the transaction (it runs after the commit and sees the row)
      const uid = toBytes('0x' + '02'.repeat(32));
      let outside: Promise<unknown[]> | undefined;
      let seenInside: number | undefined;
      const inside = await database.db.transaction().execute(async (tx) => {
        await tx.insertInto('app_data').values({ contract_app_data: uid, full_app_data: Buffer.from('{}') }).execute();
        outside = database.db.selectFrom('app_data').selectAll().execute();
        if (fixture.engine === 'postgres') seenInside = (await outside).length;
        return tx.selectFrom('app_data').select('contract_app_data').execute();
      });
      assert.equal(inside.length, 1);
      if (fixture.engine === 'postgres') assert.equal(seenInside, 0, 'another connection saw an uncommitted row');
      assert.equal((await outside!).length, fixture.engine === 'postgres' ? 0 : 1);
      assert.equal((await database.db.selectFrom('app_data').selectAll().execute()).length, 1);
    });
  });
}

describe('migrations on PostgreSQL', { skip: await skipUnless('postgres') }, () => {
  it('two replicas migrating the same empty database at once both succeed, once', async () => {
    const server = await createTestPostgres();
    try {
      const [a, b] = await Promise.all([
        openDatabase({ kind: 'postgres', url: server.url }),
        openDatabase({ kind: 'postgres', url: server.url }),
      ]);
      const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(a.db);
      assert.deepEqual(rows.rows.map((r) => r.name).sort(), Object.keys(allMigrations()).sort());
      await a.close();
      await b.close();
    } finally {
      await server.drop();
    }
  });
});

describe('bytea in PGlite (our hex codec)', () => {
  it('reads and writes what PGlite itself does, for any bytes', async () => {
    const { types } = await import('@electric-sql/pglite');
    const samples = [new Uint8Array(0), Uint8Array.from([0, 1, 15, 16, 127, 128, 254, 255]), Uint8Array.from({ length: 4096 }, (_, i) => (i * 131) % 256)];
    for (const bytes of samples) {
      const text = serializeBytea(bytes);
      assert.equal(text, types.serializers[types.BYTEA]!(bytes));
      assert.deepEqual(parseBytea(text), types.parsers[types.BYTEA]!(text, types.BYTEA));
      assert.equal(Object.getPrototypeOf(parseBytea(text)), Uint8Array.prototype, 'a plain Uint8Array, as before');
    }
    assert.throws(() => serializeBytea('0x00'), /Invalid input for bytea/);
  });

  it('round-trips bytes through the database, as parameters and in results', async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    try {
      const bytes = Uint8Array.from({ length: 300 }, (_, i) => 255 - (i % 256));
      await database.db.insertInto('app_data').values({ contract_app_data: toBytes('0x' + 'ab'.repeat(32)), full_app_data: Buffer.from(bytes) }).execute();
      const row = await database.db.selectFrom('app_data').selectAll().where('contract_app_data', '=', toBytes('0x' + 'ab'.repeat(32))).executeTakeFirstOrThrow();
      assert.deepEqual([...row.full_app_data], [...bytes]);
      assert.equal(toHex(row.contract_app_data), '0x' + 'ab'.repeat(32));
      const echoed = await sql<{ b: Uint8Array; len: number }>`select ${Buffer.from([0, 255, 16])}::bytea as b, length(${Buffer.from([0, 255, 16])}::bytea) as len`.execute(database.db);
      assert.deepEqual([...echoed.rows[0]!.b], [0, 255, 16]);
      assert.equal(echoed.rows[0]!.len, 3);
    } finally {
      await database.close();
    }
  });
});

describe('PGlite persistence', () => {
  it('keeps data in its directory across reopen', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'bb-pglite-'));
    try {
      const first = await openDatabase({ kind: 'pglite', dataDir: join(dir, 'db') });
      await first.db.insertInto('app_data').values({ contract_app_data: toBytes('0x' + '09'.repeat(32)), full_app_data: Buffer.from('{"a":1}') }).execute();
      await first.close();
      const second = await openDatabase({ kind: 'pglite', dataDir: join(dir, 'db') });
      const row = await second.db.selectFrom('app_data').selectAll().executeTakeFirstOrThrow();
      assert.equal(Buffer.from(row.full_app_data).toString(), '{"a":1}');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
