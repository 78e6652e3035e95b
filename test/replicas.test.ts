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
    // 6 requests per 1 s window per client, counted in Redis. Requests alternate between the replicas: each one's
    // x-ratelimit-remaining continues the other's count, and once the shared budget is spent the OTHER replica
    // refuses. A window that ends mid-sequence shows as a jump back up in `remaining`: start over then.
    const version = async (replica: TestApp) => {
      const res = await fetch(`${replica.baseUrl}/api/v1/version`);
      return { status: res.status, remaining: Number(res.headers.get('x-ratelimit-remaining')), body: await res.text() };
    };
    let proven = false;
    for (let attempt = 0; attempt < 20 && !proven; attempt++) {
      const seen: Array<Awaited<ReturnType<typeof version>>> = [];
      for (let i = 0; i < 8; i++) {
        const r = await version(i % 2 === 0 ? a : b);
        seen.push(r);
        if (r.status === 429) break;
      }
      const refused = seen.findIndex((r) => r.status === 429);
      const accepted = refused === -1 ? seen : seen.slice(0, refused);
      const oneWindow = accepted.every((r, i) => r.remaining === 5 - i);
      if (!oneWindow || refused !== 6) {
        await new Promise((r) => setTimeout(r, 1_100)); // a window boundary fell inside the sequence: again, in a fresh one
        continue;
      }
      assert.equal(JSON.parse(seen[refused]!.body).errorType, 'RateLimited');
      proven = true;
    }
    assert.ok(proven, 'six requests alternating between the replicas spent one budget of 6, and the seventh was refused');
  });

  it('accepts an order on one replica (PostgreSQL) and reads it on the other', async () => {
    // the budget above may still be spent: wait for the next window
    for (let i = 0; i < 100 && (await fetch(`${a.baseUrl}/api/v1/version`)).status === 429; i++) await new Promise((r) => setTimeout(r, 100));
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
