/**
 * Redis stopped under a running node (a private redis-server, SIGKILLed: the shared one is never touched):
 * every endpoint answers as it did with Redis (rate limits and the balance stream's coordination fall back to
 * this process), and the node uses Redis again once it returns (its rate-limit counters reappear there).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { canRunPrivate, startPrivateRedis, type PrivateRedis } from '../fixtures/private-services.js';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { call } from '../fixtures/orders.js';
import { waitFor } from '../fixtures/wait-for.js';
import { figure } from './figures.js';

describe('Redis stopped under a running node', { skip: canRunPrivate('redis') ? false : 'no redis-server on this machine' }, () => {
  let redis: PrivateRedis;
  let app: TestApp;
  before(async () => {
    redis = await startPrivateRedis();
    app = await startTestApp({ REDIS_URL: redis.url, RATE_LIMIT_OTHER: '100000', RATE_LIMIT_QUOTE: '100000', RATE_LIMIT_ORDERS: '100000' });
  });
  after(async () => {
    await app?.stop();
    await redis?.destroy();
  });

  async function statuses(): Promise<Record<string, number>> {
    const d = app.devnet!.describe();
    const weth = d.tokens.find((t) => t.symbol === 'WETH')!.address;
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    const trader = d.accounts.find((a) => a.role === 'trader')!.address;
    const guard = { signal: AbortSignal.timeout(60_000) };
    const sse = await fetch(`${app.baseUrl}/31337/accounts/${trader}/balances/sse?tokens=${weth}`, guard);
    const firstEvent = await sse.body!.getReader().read();
    await sse.body!.cancel().catch(() => {});
    return {
      healthz: (await call(app.baseUrl, 'GET', '/healthz')).status,
      readyz: (await call(app.baseUrl, 'GET', '/readyz')).status,
      order: (await call(app.baseUrl, 'GET', `/api/v1/orders/0x${'ab'.repeat(56)}`)).status,
      appData: (await call(app.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: `{"n":${Date.now()}}` })).status,
      quote: (await call(app.baseUrl, 'POST', '/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader, kind: 'sell', sellAmountBeforeFee: '1000000000000000000', validFor: 600, appData: '{}' })).status,
      balances: (await call(app.baseUrl, 'GET', `/31337/accounts/${trader}/balances?tokens=${weth}`)).status,
      balanceStream: sse.status * (firstEvent.done ? -1 : 1),
      usdPrice: (await call(app.baseUrl, 'GET', `/31337/tokens/${weth}/usdPrice`)).status,
    };
  }

  it('every endpoint answers as before while Redis is down, and Redis is used again when it returns', async () => {
    const client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    const before = await statuses();
    assert.ok((await client.keys('*ratelimit*')).length > 0, 'rate limits live in Redis');
    client.disconnect();
    assert.deepEqual(Object.values(before).filter((s) => s >= 500 || s < 0), [], JSON.stringify(before));

    await redis.stop();
    const during = await statuses();
    assert.deepEqual(during, before);

    await redis.start();
    const back = Date.now();
    const again = new Redis(redis.url, { lazyConnect: true });
    await again.connect();
    try {
      await waitFor('the node to use Redis again (rate-limit counters reappear)', async () => {
        await call(app.baseUrl, 'GET', `/api/v1/orders/0x${'ab'.repeat(56)}`);
        return (await again.keys('*ratelimit*')).length > 0;
      }, 60_000, 200);
      figure('redis.seconds_until_used_again', ((Date.now() - back) / 1000).toFixed(1));
      assert.deepEqual(await statuses(), before);
    } finally {
      again.disconnect();
    }
  });
});
