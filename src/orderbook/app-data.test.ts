import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../db/connection.js';
import { appDataHash } from '../protocol/index.js';
import { AppDataService } from './app-data.js';
import { OrderBookError } from '../protocol/order-book-error.js';

const doc = (appCode: string) => JSON.stringify({ appCode, metadata: {}, version: '1.4.0' });

describe('AppDataService', () => {
  let database: Database;
  let appData: AppDataService;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    appData = new AppDataService(database.db);
  });
  after(async () => {
    await database?.close();
  });

  it('check says whether the very document is stored, and refuses another one under its hash', async () => {
    const text = doc('check-stored');
    const hash = appDataHash(text);
    assert.deepEqual(await appData.check(text, hash), { hash, stored: false });
    assert.deepEqual(await appData.put(text, hash), { hash, created: true });
    assert.deepEqual(await appData.check(text, hash), { hash, stored: true });
    assert.equal(await appData.get(hash), text);
    // the same hash with other bytes cannot be produced by keccak; a row written behind the service's back stands in for it
    const other = doc('check-other');
    const otherHash = appDataHash(other);
    await sql`insert into app_data (contract_app_data, full_app_data) values (${Buffer.from(otherHash.slice(2), 'hex')}, ${Buffer.from('{"x":1}')})`.execute(database.db);
    await assert.rejects(appData.check(other, otherHash), (err: unknown) => err instanceof OrderBookError && err.errorType === 'AppDataMismatch');
    await assert.rejects(appData.check(other, otherHash), (err: unknown) => err instanceof OrderBookError && err.errorType === 'AppDataMismatch', 'the second time too');
  });

  it('a document put in a transaction that rolled back is not stored', async () => {
    const text = doc('rolled-back');
    const hash = appDataHash(text);
    await assert.rejects(
      database.db.transaction().execute(async (tx) => {
        await appData.put(text, hash, tx);
        assert.deepEqual(await appData.put(text, hash, tx), { hash, created: false }, 'seen inside the transaction');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await appData.check(text, hash), { hash, stored: false });
    assert.equal(await appData.get(hash), null);
  });
});
