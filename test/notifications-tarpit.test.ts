/**
 * Slow receivers do not stall everyone (issue 19, major 6), end to end on a whole node (real devnet settling
 * auctions, PGlite, the outbox dispatcher with its default concurrency of 8): eight subscriptions whose webhooks are
 * real tarpits (HTTP servers that accept the connection and never answer) hold a backlog of deliveries; a healthy
 * subscriber's order settles and its `order_filled` still arrives within 30 s of the settlement being indexed.
 * (Before: the dispatcher claimed 8 deliveries and waited 10 s for the slowest, so the backlog ahead of it took minutes.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { E18, trading, type Trading } from './fixtures/trading.js';
import { waitFor } from './fixtures/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from './fixtures/webhook-receiver.js';
import { toBytes } from '../src/db/codec.js';
import { insertNotifications } from '../src/aux/notifications/notification-store.js';
import { subscribeTypedData } from '../src/aux/notifications/subscription-signatures.js';

const TARPITS = 8;
const BACKLOG = 25;

interface Tarpit {
  url: string;
  /** requests received (and never answered) */
  requests: number;
  close(): Promise<void>;
}

async function startTarpit(): Promise<Tarpit> {
  const sockets = new Set<Socket>();
  const tarpit = { requests: 0 } as Tarpit;
  const server: Server = createServer((req) => {
    tarpit.requests++;
    req.resume(); // read the request, never answer
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tarpit.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  tarpit.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return tarpit;
}

describe('notification delivery with tarpit receivers (real node)', () => {
  let app: TestApp;
  let t: Trading;
  let receiver: WebhookReceiver;
  const tarpits: Tarpit[] = [];

  async function subscribe(account: LocalAccount, target: string) {
    const deadline = Math.floor(Date.now() / 1000) + 600;
    const signature = await account.signTypedData(subscribeTypedData({ account: account.address, channel: 'webhook', target, deadline }));
    const res = await call(app.baseUrl, 'POST', `/accounts/${account.address}/subscriptions`, { channel: 'webhook', target, deadline, signature });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; secret: string };
  }

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true', NOTIFY_POLL_INTERVAL_MS: '200' });
    t = trading(app);
    receiver = await startWebhookReceiver();
    for (let i = 0; i < TARPITS; i++) tarpits.push(await startTarpit());
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
    for (const tarpit of tarpits) await tarpit.close();
  });

  it("with 8 tarpit subscriptions holding work, a healthy subscriber's order_filled arrives within 30 s of its settlement", async () => {
    // eight accounts whose webhooks never answer, each with a backlog of notifications to deliver
    for (const [i, tarpit] of tarpits.entries()) {
      const account = privateKeyToAccount(generatePrivateKey());
      await subscribe(account, `${tarpit.url}/hook`);
      const backlog = Array.from({ length: BACKLOG }, (_, k) => ({
        id: `tarpit-${i}-${k}`, chainId: 31337, account: account.address.toLowerCase() as Hex, type: 'order_cancelled' as const,
        message: `backlog ${k}`, timestamp: new Date(), metadata: { orderId: `0x${i.toString(16)}${k.toString(16)}`, chainId: 31337 },
      }));
      await app.database.db.transaction().execute((trx) => insertNotifications(trx, backlog));
    }
    await waitFor('every tarpit holding a delivery', () => tarpits.every((tp) => tp.requests > 0), 60_000);

    const { WETH, USDC } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const created = await subscribe(owner, `${receiver.url}/healthy`);
    receiver.setSecret('/healthy', created.secret);
    const m = await t.marketOut(E18 / 10n, [WETH, USDC]);
    const uid = await t.place(owner, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, buyAmount: (m * 97n) / 100n });
    await waitFor('the settlement indexed', async () => (await app.database.db.selectFrom('trades').select('order_uid').where('order_uid', '=', toBytes(uid)).execute()).length > 0, 120_000, 100);
    const settledAt = Date.now();
    const filled = await waitFor('order_filled delivered to the healthy subscriber', () => receiver.received.find((r) => r.path === '/healthy' && r.body.type === 'order_filled'), 60_000, 100);
    const afterMs = Date.now() - settledAt;
    assert.equal(filled.body.metadata.orderId, uid);
    assert.ok(afterMs < 30_000, `order_filled arrived ${afterMs} ms after the settlement was indexed`);
    // the tarpits were still holding work meanwhile: their backlog is not through
    const pending = await app.database.db.selectFrom('notification_deliveries').select('status').where('status', '=', 'pending').execute();
    assert.ok(pending.length > 0, 'the tarpit backlog is still pending');
  });
});
