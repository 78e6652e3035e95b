/**
 * The dashboard routes' answers that a devnet node cannot show: "Trade a CoW" on a real chain is refused with
 * 403 `{message}`, and unknown networks are 404 `{message}` — on the real HTTP server with the real error handler.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { registerDashboardRoutes } from './dashboard-routes.js';
import { openDatabase } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { insertNotifications } from '../aux/notifications/notification-store.js';
import { registerNotificationRoutes } from '../aux/notifications/routes.js';
import { SubscriptionService } from '../aux/notifications/subscription-service.js';

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

describe("the dashboard's notifications view", () => {
  it('GET /dashboard/api/{network}/accounts/{a}/notifications answers {available: true, notifications} of that network; available: false without the API', async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    const servers: HttpServer[] = [];
    try {
      await migrateToLatest(database.db);
      const account = `0x${'ab'.repeat(20)}` as const;
      const produced = (id: string, chainId: number) => ({ id, chainId, account, type: 'order_filled' as const, message: `fill ${id}`, timestamp: new Date(1_700_000_000_000), metadata: { orderId: `0x${id}`, chainId } });
      await database.db.transaction().execute((trx) => insertNotifications(trx, [produced('01', 1), produced('02', 100)]));
      for (const enabled of [true, false]) {
        const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
        servers.push(server);
        registerNotificationRoutes(server, { db: database.db, subscriptions: new SubscriptionService({ db: database.db, channels: new Map(), contractSignatures: [] }), enabled, vapidPublicKey: () => null });
        registerDashboardRoutes(server, { networks: [{ name: 'mainnet', chainId: 1, devnet: false, isDefault: true, blockTime: null, reads: null as never, cowDemo: null }] });
        const res = await server.inject({ method: 'GET', url: `/dashboard/api/mainnet/accounts/0x${'AB'.repeat(20)}/notifications` });
        assert.equal(res.statusCode, 200);
        if (enabled) {
          const body = res.json();
          assert.equal(body.available, true);
          assert.deepEqual(body.notifications.map((n: { id: string; metadata: { chainId: number } }) => [n.id, n.metadata.chainId]), [['01', 1]]);
        } else {
          assert.deepEqual(res.json(), { available: false, notifications: null });
        }
      }
    } finally {
      for (const s of servers) await s.close();
      await database.close();
    }
  });
});
