/**
 * Production shape: two replicas on real PostgreSQL (DATABASE_URL) and real Redis (REDIS_URL). They share the
 * database (an order placed on one is read on the other) and one rate-limit budget per client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { createTestPostgres, type TestPostgres } from './fixtures/databases.js';
import { skipUnless, TEST_REDIS_URL } from './fixtures/required-services.js';
import { deleteNamespace } from '../src/infra/test-redis.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';

const skip = (await skipUnless('postgres')) || (await skipUnless('redis'));

describe('two replicas on PostgreSQL and Redis', { skip }, () => {
  let pg: TestPostgres;
  let a: TestApp;
  let b: TestApp;
  const prefix = `bbtest:${randomBytes(4).toString('hex')}:`;

  before(async () => {
    pg = await createTestPostgres();
    const env = { DATABASE_URL: pg.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_OTHER: '6' };
    // both replicas start at once against the same empty database: migrations must apply exactly once
    [a, b] = await Promise.all([startTestApp(env), startTestApp(env)]);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await pg?.drop();
    if (!skip) await deleteNamespace(TEST_REDIS_URL, prefix);
  });

  it('serves app data written by the other replica', async () => {
    const put = await call(a.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: '{"replica":"a"}' });
    assert.equal(put.status, 201);
    const got = await call(b.baseUrl, 'GET', `/api/v1/app_data/${put.body}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.fullAppData, '{"replica":"a"}');
    assert.equal(a.database.engine, 'postgres');
  });

  it('shares one rate-limit budget per client across replicas', async () => {
    // 6 requests per second per client in total: 5 on a and 5 on b within the same second → some refused
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => call(a.baseUrl, 'GET', '/api/v1/version')),
      ...Array.from({ length: 5 }, () => call(b.baseUrl, 'GET', '/api/v1/version')),
    ]);
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    assert.ok(ok <= 7, `at most the shared budget (6, +1 for a window edge) may pass, ${ok} did`);
    assert.ok(limited.length >= 3);
    assert.equal(limited[0]!.body.errorType, 'RateLimited');
  });

  it('accepts an order on one replica (PostgreSQL) and reads it on the other', async () => {
    await new Promise((r) => setTimeout(r, 1100)); // next rate-limit window
    // each replica has its own devnet (same deterministic deployment); the order is signed for chain 31337
    const d = a.devnet!.describe();
    const trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    const order = makeOrder({ sellToken: d.tokens[0]!.address as Hex, buyToken: d.tokens[1]!.address as Hex, sellAmount: 10n ** 16n });
    const created = await call(a.baseUrl, 'POST', '/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const read = await call(b.baseUrl, 'GET', `/api/v1/orders/${created.body}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.uid, created.body);
  });
});
