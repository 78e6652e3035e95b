/**
 * The dashboard routes' answers that a devnet node cannot show: "Trade a CoW" on a real chain is refused with
 * 403 `{message}`, and unknown networks are 404 `{message}` — on the real HTTP server with the real error handler.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { registerDashboardRoutes } from './dashboard-routes.js';

describe('dashboard routes on a node without a devnet', () => {
  let server: HttpServer;
  before(async () => {
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    // a real chain: no devnet, so no demo; its reads are never reached by these requests
    registerDashboardRoutes(server, { networks: [{ name: 'mainnet', chainId: 1, devnet: false, isDefault: true, blockTime: null, reads: null as never, cowDemo: null }] });
    await server.ready();
  });
  after(() => server.close());

  it('refuses "Trade a CoW" on a real chain with 403 {message}', async () => {
    for (const network of ['mainnet', '1']) {
      const res = await server.inject({ method: 'POST', url: `/dashboard/api/${network}/trade-a-cow` });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, /devnet only/);
    }
  });

  it('answers 404 {message} naming the served networks for an unknown one', async () => {
    const res = await server.inject({ method: 'POST', url: '/dashboard/api/gnosis/trade-a-cow' });
    assert.equal(res.statusCode, 404);
    assert.match(res.json().message, /not served here \(served: mainnet\)/);
  });

  it('lists the networks for the picker', async () => {
    const res = await server.inject({ method: 'GET', url: '/dashboard/api/networks' });
    assert.deepEqual(res.json(), [{ name: 'mainnet', chainId: 1, devnet: false, isDefault: true, blockTime: null }]);
  });
});
