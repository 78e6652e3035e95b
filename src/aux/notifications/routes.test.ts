/**
 * Notifications end to end on a whole node (real devnet, auctions settling, PGlite): the read API, signed
 * subscriptions (EOA and the devnet's ERC-1271 wallet), and delivery to a real local webhook receiver that
 * verifies every signature: an order placed with the official SDK arrives after settlement as one signed
 * order_filled (plus price_improvement), also after the receiver was down for a while; a 4xx is not retried and shows as the subscription's last error; an
 * email subscription receives its notification through a real SMTP server (`smtp-server`) started here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OrderBookApi, OrderSigningUtils, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, hashTypedData, http, keccak256, toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { startTestApp, type TestApp } from '../../../test/fixtures/app.js';
import { startSmtpInbox, type SmtpInbox } from '../../../test/fixtures/smtp-inbox.js';
import { call } from '../../../test/fixtures/orders.js';
import { E18, trading, waitFor, type Trading } from '../../../test/fixtures/trading.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/fixtures/webhook-receiver.js';
import { subscriptionRequestTypedData, unsubscribeTypedData } from './subscription-signatures.js';

const now = () => Math.floor(Date.now() / 1000);
const SDK_OVERRIDE = { settlementContractOverride: { 31337: '0x9008D19f58AAbD9eD0D60971565AA8510560ab41' } } as never;

/** Quotes, signs and submits a sell order with the official SDK (as orderbook-sdk.test.ts), limit `limitPercent` % of the quote. */
async function placeWithSdk(app: TestApp, owner: LocalAccount, params: { sellToken: Hex; buyToken: Hex; sellAmount: bigint; limitPercent: bigint }): Promise<string> {
  setGlobalAdapter(new ViemAdapter({ provider: createPublicClient({ transport: http(app.devnet!.rpcUrl) }) as never, signer: owner as never }) as never);
  const api = new OrderBookApi({ chainId: 31337 as never, env: 'prod', baseUrls: { 31337: `${app.baseUrl}/devnet` } as never, backoffOpts: { numOfAttempts: 1 } } as never);
  const appData = '{"appCode":"batchbook-test","metadata":{},"version":"1.4.0"}';
  const appDataHash = keccak256(toHex(appData));
  const { quote, id } = await api.getQuote({ sellToken: params.sellToken, buyToken: params.buyToken, from: owner.address, receiver: owner.address, kind: 'sell' as never, sellAmountBeforeFee: String(params.sellAmount), appData } as never);
  const order = {
    sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: owner.address,
    sellAmount: (BigInt(quote.sellAmount) + BigInt(quote.feeAmount)).toString(),
    buyAmount: ((BigInt(quote.buyAmount) * params.limitPercent) / 100n).toString(),
    validTo: quote.validTo, appData: appDataHash, feeAmount: '0', kind: quote.kind,
    partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
  };
  const signed = await OrderSigningUtils.signOrder(order as never, 31337 as never, owner as never, SDK_OVERRIDE);
  return api.sendOrder({ ...order, appData, appDataHash, signature: signed.signature, signingScheme: signed.signingScheme, from: owner.address, quoteId: id } as never);
}

describe('notifications API and webhook delivery (real node)', () => {
  let app: TestApp;
  let t: Trading;
  let receiver: WebhookReceiver;
  let smtp: SmtpInbox;
  const inbox = (): SmtpInbox['inbox'] => smtp.inbox;

  async function subscribe(account: LocalAccount, body: { channel?: string; target: string; types?: string[]; deadline?: number }, as?: Address) {
    const owner = (as ?? account.address) as Address;
    const deadline = body.deadline ?? now() + 600;
    const channel = body.channel ?? 'webhook';
    const typed = subscriptionRequestTypedData({ account: owner, channel, target: body.target, types: body.types, deadline });
    const signature = as ? await account.sign!({ hash: hashTypedData(typed) }) : await account.signTypedData(typed);
    return call(app.baseUrl, 'POST', `/accounts/${owner}/subscriptions`, { channel, target: body.target, ...(body.types ? { types: body.types } : {}), deadline, signature });
  }

  before(async () => {
    smtp = await startSmtpInbox();
    app = await startTestApp({
      AUCTIONS: 'true',
      NOTIFY_BACKOFF_BASE_MS: '100',
      NOTIFY_BACKOFF_CAP_MS: '400',
      NOTIFY_POLL_INTERVAL_MS: '200',
      SMTP_URL: smtp.url,
      SMTP_FROM: 'batchbook <alerts@batchbook.example>',
    });
    t = trading(app);
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
    await smtp?.close();
  });

  it('GET /accounts/{account}/notifications: [] when none, 400 {message} for a bad address, cached 300 s', async () => {
    const none = await call(app.baseUrl, 'GET', `/accounts/0x${'12'.repeat(20)}/notifications`);
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, []);
    assert.equal(none.headers.get('cache-control'), 'public, max-age=300');
    const bad = await call(app.baseUrl, 'GET', '/accounts/0x1234/notifications');
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /account/);
    assert.equal((await call(app.baseUrl, 'GET', `/accounts/0x${'12'.repeat(20)}/notifications?limit=0`)).status, 400);
  });

  it('subscriptions: signed by the account; 400 bad input, 401 bad signature, 409 twice; listed without secret; deleted with a signature', async () => {
    const [trader, other] = t.traders as [LocalAccount, LocalAccount];
    const target = `${receiver.url}/plain`;
    const created = await subscribe(trader, { target, types: ['order_filled'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.id, /^sub_[0-9a-f]{24}$/);
    assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.deepEqual(created.body.types, ['order_filled']);
    assert.deepEqual({ channel: created.body.channel, target: created.body.target }, { channel: 'webhook', target });

    assert.equal((await subscribe(trader, { target })).status, 409, 'the same channel + target twice');
    const forged = await subscribe(other, { target: `${receiver.url}/forged` }, trader.address);
    assert.equal(forged.status, 401, 'signed by someone else');
    for (const [body, pattern] of [
      [{ target, deadline: now() - 1 }, /deadline: must be in the future/],
      [{ target: `${target}/2`, deadline: now() + 7200 }, /deadline: at most 3600 s/],
      [{ target: 'ftp://x' }, /webhook target: expected an http\(s\) URL/],
      [{ channel: 'telegram', target: '12345' }, /TELEGRAM_BOT_TOKEN/],
      [{ channel: 'pigeon', target: 'x' }, /channel/],
      [{ target: `${target}/3`, types: ['order_filled', 'lottery_won'] }, /types/],
    ] as const) {
      const res = await subscribe(trader, body as never);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.message, pattern);
    }

    const list = await call(app.baseUrl, 'GET', `/accounts/${trader.address.toLowerCase()}/subscriptions`);
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    assert.equal(list.body[0].id, created.body.id);
    assert.equal(list.body[0].secret, undefined, 'never listed');
    assert.equal(list.body[0].lastError, null);

    const deadline = now() + 60;
    const wrong = await other.signTypedData(unsubscribeTypedData({ account: trader.address, id: created.body.id, deadline }));
    assert.equal((await call(app.baseUrl, 'DELETE', `/accounts/${trader.address}/subscriptions/${created.body.id}`, { deadline, signature: wrong })).status, 401);
    const signature = await trader.signTypedData(unsubscribeTypedData({ account: trader.address, id: created.body.id, deadline }));
    const deleted = await call(app.baseUrl, 'DELETE', `/accounts/${trader.address}/subscriptions/${created.body.id}`, { deadline, signature });
    assert.equal(deleted.status, 204);
    assert.equal((await call(app.baseUrl, 'DELETE', `/accounts/${trader.address}/subscriptions/${created.body.id}`, { deadline, signature })).status, 404);
    assert.deepEqual((await call(app.baseUrl, 'GET', `/accounts/${trader.address}/subscriptions`)).body, []);
  });

  it('a contract wallet subscribes with an ERC-1271 signature of its owner', async () => {
    const wallet = app.devnet!.describe().contracts.smartWallet as Address;
    const owner = t.traders[0]!; // the devnet's demo wallet is owned by trader 0
    const res = await subscribe(owner, { target: `${receiver.url}/wallet` }, wallet);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const forged = await subscribe(t.traders[1]!, { target: `${receiver.url}/wallet2` }, wallet);
    assert.equal(forged.status, 401);
  });

  it('an order placed with the official SDK reaches the webhook as one signed order_filled (and price_improvement) after settlement, also after the receiver was down; the API lists them', async () => {
    const { WETH, USDC } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const created = await subscribe(owner, { target: `${receiver.url}/trader` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    receiver.setSecret('/trader', created.body.secret);
    receiver.failWith(503);
    const uid = await placeWithSdk(app, owner, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, limitPercent: 97n });
    // while the receiver is down the failures show in the subscription list
    const listed = await waitFor('the failure shown', async () => {
      const list = (await call(app.baseUrl, 'GET', `/accounts/${owner.address}/subscriptions`)).body;
      return list[0]?.lastError ? list[0] : null;
    });
    assert.match(listed.lastError, /503/);
    receiver.failWith(null);
    const arrived = await waitFor('order_filled and price_improvement delivered', async () => {
      const mine = receiver.received.filter((r) => r.path === '/trader');
      return mine.length >= 2 ? mine : null;
    });
    assert.deepEqual(arrived.map((r) => r.body.type).sort(), ['order_filled', 'price_improvement'], 'one of each');
    for (const r of arrived) {
      assert.equal(r.body.id, r.id, 'body.id = webhook-id');
      assert.equal(r.body.account, owner.address.toLowerCase());
      assert.equal(r.body.metadata.orderId, uid);
      assert.equal(r.body.metadata.chainId, 31337);
      assert.match(r.headers['webhook-signature']!, /^v1,/);
      assert.deepEqual(Object.keys(r.body), ['id', 'account', 'type', 'message', 'timestamp', 'metadata']);
    }
    assert.match(arrived.find((r) => r.body.type === 'order_filled')!.body.message, /^Sold 0\.1 WETH for [\d.]+ USDC on devnet$/);
    assert.equal(receiver.rejected, 0);

    const api = await call(app.baseUrl, 'GET', `/accounts/${owner.address}/notifications`);
    assert.equal(api.status, 200);
    assert.deepEqual(api.body.map((n: { id: string }) => n.id).sort(), arrived.map((r) => r.id).sort());
    const page = await call(app.baseUrl, 'GET', `/accounts/${owner.address}/notifications?limit=1&offset=1`);
    assert.equal(page.body.length, 1);
    assert.equal(page.body[0].id, api.body[1].id);
  });

  it('a 4xx other than 408/429 is not retried: dead-lettered at once, shown in the subscription list', async () => {
    const { WETH, DAI } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const created = await subscribe(owner, { target: `${receiver.url}/gone-wrong`, types: ['order_cancelled'] });
    // no secret registered for this path: the receiver answers 401
    const uid = await t.place(owner, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 100n, buyAmount: 10n ** 30n });
    const before = receiver.rejected;
    await t.cancel(owner, uid);
    const listed = await waitFor('the dead letter shown', async () => {
      const list = (await call(app.baseUrl, 'GET', `/accounts/${owner.address}/subscriptions`)).body;
      return list[0]?.failedDeliveries === 1 ? list[0] : null;
    });
    assert.equal(listed.id, created.body.id);
    assert.match(listed.lastError, /401/);
    assert.equal(listed.pendingDeliveries, 0);
    assert.equal(receiver.rejected, before + 1, 'one attempt only');
  });

  it('an email subscription receives its notification through the SMTP server', async () => {
    const { WETH, DAI } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const mailbox = `trader-${owner.address.slice(2, 10).toLowerCase()}@example.com`;
    const created = await subscribe(owner, { channel: 'email', target: mailbox, types: ['order_cancelled'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.channel, 'email');
    assert.equal(created.body.secret, undefined, 'only webhooks have a secret');
    assert.equal(created.body.confirmed, false, 'an email address confirms first');
    const confirmation = inbox().find((m) => m.to.includes(mailbox))!;
    const code = /Confirmation code: ([0-9a-f]{24})/.exec(confirmation.raw.replace(/=\r?\n/g, ''))![1]!;
    const confirmed = await call(app.baseUrl, 'POST', `/accounts/${owner.address}/subscriptions/${created.body.id}/confirm`, { code });
    assert.equal(confirmed.status, 204, JSON.stringify(confirmed.body));
    const uid = await t.place(owner, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 100n, buyAmount: 10n ** 30n });
    await t.cancel(owner, uid);
    const mail = await waitFor('the order_cancelled mail received', async () => inbox().find((m) => m.to.includes(mailbox) && m.raw.includes('Order cancelled')) ?? null);
    const head = mail.raw.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' '); // unfolded headers
    const [cancelled] = (await call(app.baseUrl, 'GET', `/accounts/${owner.address}/notifications`)).body;
    assert.equal(cancelled.type, 'order_cancelled');
    assert.equal(cancelled.metadata.orderId, uid);
    assert.match(head, /^Subject: Order cancelled: Your order to sell 0\.01 WETH .* was cancelled on devnet$/m);
    assert.ok(head.includes(`X-Batchbook-Notification-ID: ${cancelled.id}`), head);
    // the outbox writes "delivered" in a group commit just after the send: the delivery is pending until then
    const list = await waitFor('the delivery recorded', async () => {
      const body = (await call(app.baseUrl, 'GET', `/accounts/${owner.address}/subscriptions`)).body;
      return body[0].pendingDeliveries === 0 ? body : null;
    });
    assert.equal(list[0].lastError, null);
  });

  it('GET /notifications/vapid-public-key', async () => {
    const res = await call(app.baseUrl, 'GET', '/notifications/vapid-public-key');
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(res.body.publicKey, 'base64url').length, 65);
  });
});

describe('notifications without SMTP_URL', () => {
  it('an email subscription is refused with 400 naming SMTP_URL', async () => {
    const { pino } = await import('pino');
    const { buildHttpServer } = await import('../../http/server.js');
    const { openDatabase } = await import('../../db/connection.js');
    const { buildNotificationChannels } = await import('../../notify/channels/notification-channels.js');
    const { loadConfig } = await import('../../config/config.js');
    const { registerNotificationRoutes } = await import('./routes.js');
    const { SubscriptionService } = await import('./subscription-service.js');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = await mkdtemp(join(tmpdir(), 'bb-nosmtp-'));
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    try {
      const channels = await buildNotificationChannels(loadConfig({}).notifyChannels, { dataDir, devnetOnly: true });
      const subscriptions = new SubscriptionService({ db: database.db, channels, contractSignatures: [] });
      registerNotificationRoutes(server, { db: database.db, subscriptions, enabled: true, vapidPublicKey: () => null });
      const payload = { channel: 'email', target: 'trader@example.com', deadline: now() + 60, signature: `0x${'11'.repeat(65)}` };
      const res = await server.inject({ method: 'POST', url: `/accounts/0x${'12'.repeat(20)}/subscriptions`, payload });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /SMTP_URL/);
    } finally {
      await server.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('notifications behind CMS_ENABLED=false', () => {
  it('every route answers 503 naming the variable', async () => {
    const { pino } = await import('pino');
    const { buildHttpServer } = await import('../../http/server.js');
    const { openDatabase } = await import('../../db/connection.js');
    const { registerNotificationRoutes } = await import('./routes.js');
    const { SubscriptionService } = await import('./subscription-service.js');
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    try {
      registerNotificationRoutes(server, { db: database.db, subscriptions: new SubscriptionService({ db: database.db, channels: new Map(), contractSignatures: [] }), enabled: false, vapidPublicKey: () => null });
      const account = `0x${'12'.repeat(20)}`;
      for (const [method, url, payload] of [
        ['GET', `/accounts/${account}/notifications`],
        ['GET', `/accounts/${account}/subscriptions`],
        ['POST', `/accounts/${account}/subscriptions`, { channel: 'webhook', target: 'http://x', deadline: now() + 60, signature: `0x${'11'.repeat(65)}` }],
        ['DELETE', `/accounts/${account}/subscriptions/sub_1`, { deadline: now() + 60, signature: `0x${'11'.repeat(65)}` }],
        ['GET', '/notifications/vapid-public-key'],
      ] as const) {
        const res = await server.inject({ method, url, ...(payload ? { payload } : {}) });
        assert.equal(res.statusCode, 503, `${method} ${url}`);
        assert.match(res.json().message, /CMS_ENABLED=false/);
      }
    } finally {
      await server.close();
      await database.close();
    }
  });
});
