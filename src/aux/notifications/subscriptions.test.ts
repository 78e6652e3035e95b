/**
 * Subscriptions without a chain (issue 19, majors 4 and 5): the routes on an in-process server over an in-memory
 * PGlite, the real channels (a real SMTP server started here, real local HTTP servers as webhook targets). The
 * public listing masks every target and scrubs it from the last error; at most 10 subscriptions per account;
 * `types` are signed; the signature is checked before the target; email deliveries wait for the confirmation.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startSmtpInbox } from '../../../test/fixtures/smtp-inbox.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadConfig } from '../../config/config.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { migrateToLatest } from '../../db/migrate.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { buildNotificationChannels, type NotificationChannels } from '../../notify/channels/notification-channels.js';
import { OutboxDispatcher } from '../../notify/outbox/outbox-dispatcher.js';
import { insertNotifications } from './notification-store.js';
import type { ProducedNotification } from './notification-types.js';
import { registerNotificationRoutes } from './routes.js';
import { SubscriptionService } from './subscription-service.js';
import { subscribeTypedData, subscribeWithTypesTypedData } from './subscription-signatures.js';

const now = () => Math.floor(Date.now() / 1000);
const P256DH = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url');
const AUTH = Buffer.alloc(16, 9).toString('base64url');

interface Harness {
  server: HttpServer;
  channels: NotificationChannels;
  database: Database;
  inbox: { to: string[]; raw: string }[];
  /** requests the local HTTP target received */
  hits: string[];
  targetUrl: string;
  close(): Promise<void>;
}

async function startHarness(options: { devnetOnly?: boolean } = {}): Promise<Harness> {
  const smtp = await startSmtpInbox();
  const inbox = smtp.inbox;
  const hits: string[] = [];
  const target: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const dataDir = await mkdtemp(join(tmpdir(), 'bb-subs-'));
  const database = await openDatabase({ kind: 'pglite', dataDir: null });
  await migrateToLatest(database.db);
  const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
  const config = loadConfig({
    SMTP_URL: smtp.url,
    SMTP_FROM: 'batchbook <alerts@batchbook.example>',
    TELEGRAM_BOT_TOKEN: '123456789:AAabcdefghijklmnopqrstuvwxyz',
  });
  const channels = await buildNotificationChannels(config.notifyChannels, { dataDir, devnetOnly: options.devnetOnly ?? true });
  const subscriptions = new SubscriptionService({ db: database.db, channels, contractSignatures: [] });
  registerNotificationRoutes(server, { db: database.db, subscriptions, enabled: true, vapidPublicKey: () => null });
  return {
    server,
    channels,
    database,
    inbox,
    hits,
    targetUrl: `http://127.0.0.1:${(target.address() as { port: number }).port}`,
    async close() {
      await server.close();
      await database.close();
      await smtp.close();
      await new Promise<void>((resolve) => target.close(() => resolve()));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function subscribe(h: Harness, signer: PrivateKeyAccount, body: { channel: string; target: string; types?: string[] }, sign?: (deadline: number) => Promise<`0x${string}`>) {
  const deadline = now() + 600;
  const signature = sign
    ? await sign(deadline)
    : body.types === undefined
      ? await signer.signTypedData(subscribeTypedData({ account: signer.address, channel: body.channel, target: body.target, deadline }))
      : await signer.signTypedData(subscribeWithTypesTypedData({ account: signer.address, channel: body.channel, target: body.target, types: body.types, deadline }));
  const res = await h.server.inject({ method: 'POST', url: `/accounts/${signer.address}/subscriptions`, payload: { ...body, deadline, signature } });
  return { status: res.statusCode, body: res.json() };
}

describe('subscription listing (public): every target masked', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('shows no webhook path or query, no full email, no full chat id, no push endpoint path or keys, also not in lastError', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const webhook = `${h.targetUrl}/services/T000SECRET/B000SECRET/xoxbTOKENPART?token=QUERYSECRET`;
    const email = 'janedoe.trader@x.org';
    const chat = '-1001234567890';
    const push = JSON.stringify({ endpoint: 'http://127.0.0.1:9/push/v2/ENDPOINTSECRET', keys: { p256dh: P256DH, auth: AUTH } });
    const created = [
      await subscribe(h, owner, { channel: 'webhook', target: webhook }),
      await subscribe(h, owner, { channel: 'email', target: email }),
      await subscribe(h, owner, { channel: 'telegram', target: chat }),
      await subscribe(h, owner, { channel: 'webpush', target: push }),
    ];
    for (const c of created) assert.equal(c.status, 201, JSON.stringify(c.body));
    // a receiver's error quoting the target back (as SMTP servers and some HTTP stacks do)
    for (const [id, error] of [
      [created[0]!.body.id, `HTTP 503 from ${webhook}`],
      [created[1]!.body.id, `SMTP 550: <${email}> no such user (JaneDoe.Trader@x.org)`],
      [created[2]!.body.id, `Telegram 400: chat ${chat} not found`],
      [created[3]!.body.id, `push service answered 410 for http://127.0.0.1:9/push/v2/ENDPOINTSECRET (${P256DH})`],
    ] as const) {
      await h.database.db.updateTable('notification_subscriptions').set({ last_error: error, last_error_at: new Date() }).where('id', '=', id).execute();
    }
    const res = await h.server.inject({ method: 'GET', url: `/accounts/${owner.address.toLowerCase()}/subscriptions` });
    assert.equal(res.statusCode, 200);
    const list = res.json() as Array<{ id: string; channel: string; target: string; lastError: string }>;
    const byChannel = Object.fromEntries(list.map((s) => [s.channel, s]));
    assert.equal(byChannel.webhook!.target, `${h.targetUrl}/***`);
    assert.equal(byChannel.email!.target, 'j***@x.org');
    assert.equal(byChannel.telegram!.target, '***90');
    assert.equal(byChannel.webpush!.target, 'http://127.0.0.1:9/***');
    const text = res.body;
    for (const secret of ['T000SECRET', 'B000SECRET', 'xoxbTOKENPART', 'QUERYSECRET', 'janedoe', 'JaneDoe', '1001234567890', '12345678', 'ENDPOINTSECRET', P256DH, AUTH]) {
      assert.ok(!text.includes(secret), `the listing reveals ${secret}: ${text}`);
    }
    assert.equal(byChannel.webhook!.lastError, 'HTTP 503 from ***');
    assert.match(byChannel.email!.lastError, /^SMTP 550: <\*\*\*> no such user/);
  });
});

function produced(id: string, account: `0x${string}`): ProducedNotification {
  return { id, chainId: 31337, account, type: 'order_filled', message: `fill ${id}`, timestamp: new Date(), metadata: { orderId: `0x${id}`, chainId: 31337 } };
}

describe('subscriptions are no free relay', () => {
  let h: Harness;
  let strict: Harness;
  before(async () => {
    h = await startHarness();
    strict = await startHarness({ devnetOnly: false });
  });
  after(async () => {
    await h?.close();
    await strict?.close();
  });

  it('at most 10 subscriptions per account: the 11th is refused with 409 {message}', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    for (let i = 0; i < 10; i++) assert.equal((await subscribe(h, owner, { channel: 'webhook', target: `${h.targetUrl}/cap/${i}` })).status, 201);
    const eleventh = await subscribe(h, owner, { channel: 'webhook', target: `${h.targetUrl}/cap/10` });
    assert.equal(eleventh.status, 409);
    assert.deepEqual(Object.keys(eleventh.body), ['message']);
    assert.match(eleventh.body.message, /at most 10 subscriptions per account/);
    // concurrent requests cannot pass the cap together
    const other = privateKeyToAccount(generatePrivateKey());
    const burst = await Promise.all(Array.from({ length: 14 }, (_, i) => subscribe(h, other, { channel: 'webhook', target: `${h.targetUrl}/burst/${i}` })));
    assert.equal(burst.filter((r) => r.status === 201).length, 10);
    assert.equal(burst.filter((r) => r.status === 409).length, 4);
  });

  it('types are signed exactly as sent: the old message, or the types reordered, get 401', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const target = `${h.targetUrl}/typed`;
    const types = ['order_filled', 'order_expired'];
    const old = await subscribe(h, owner, { channel: 'webhook', target, types }, (deadline) => owner.signTypedData(subscribeTypedData({ account: owner.address, channel: 'webhook', target, deadline })));
    assert.equal(old.status, 401, 'a signature that does not cover the types');
    const reordered = await subscribe(h, owner, { channel: 'webhook', target, types }, (deadline) =>
      owner.signTypedData(subscribeWithTypesTypedData({ account: owner.address, channel: 'webhook', target, types: [...types].reverse(), deadline })),
    );
    assert.equal(reordered.status, 401);
    const signed = await subscribe(h, owner, { channel: 'webhook', target, types });
    assert.equal(signed.status, 201, JSON.stringify(signed.body));
    assert.deepEqual(signed.body.types, types);
    // without types: signed as before, every type
    const untyped = await subscribe(h, owner, { channel: 'webhook', target: `${target}/all` });
    assert.equal(untyped.status, 201);
    assert.equal(untyped.body.types.length, 6);
  });

  it('a bad signature gets 401 whatever the target; a refusal never tells a resolved address', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    for (const target of ['http://no-such-host.invalid/x', 'http://localhost:1/x', 'ftp://x', 'http://127.0.0.1:1/x']) {
      const res = await subscribe(strict, owner, { channel: 'webhook', target }, (deadline) => stranger.signTypedData(subscribeTypedData({ account: owner.address, channel: 'webhook', target, deadline })));
      assert.equal(res.status, 401, target);
      assert.match(res.body.message, /^signature: not signed by the account/);
    }
    // signed: the target is judged, without the address a name resolves to
    const local = await subscribe(strict, owner, { channel: 'webhook', target: 'http://localhost:1/x' });
    assert.equal(local.status, 400);
    assert.match(local.body.message, /localhost resolves to an address that is not public/);
    assert.ok(!/127\.0\.0\.1|::1/.test(local.body.message), local.body.message);
    const nowhere = await subscribe(strict, owner, { channel: 'webhook', target: 'http://no-such-host.invalid/x' });
    assert.equal(nowhere.status, 400);
  });

  it('creating a webhook subscription does not contact the target; its first request is the first delivery', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const before = h.hits.length;
    const created = await subscribe(h, owner, { channel: 'webhook', target: `${h.targetUrl}/quiet` });
    assert.equal(created.status, 201);
    await h.database.db.transaction().execute((trx) => insertNotifications(trx, [produced(`quiet-${owner.address}`, owner.address.toLowerCase() as `0x${string}`)]));
    const dispatcher = new OutboxDispatcher({ db: h.database.db, channels: h.channels, policy: { baseMs: 10, capMs: 40, maxAgeMs: 60_000 }, leaseMs: 30_000, pollIntervalMs: 20, concurrency: 4 });
    assert.equal(await dispatcher.dispatchOnce(), 1);
    assert.deepEqual(h.hits.slice(before), ['POST /quiet'], 'nothing before the delivery');
  });

  it('email: one confirmation mail with a code; no delivery before the code comes back, deliveries after', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = owner.address.toLowerCase() as `0x${string}`;
    const mailbox = `confirm-${account.slice(2, 10)}@example.com`;
    const created = await subscribe(h, owner, { channel: 'email', target: mailbox });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.confirmed, false);
    const mails = h.inbox.filter((m) => m.to.includes(mailbox));
    assert.equal(mails.length, 1, 'one confirmation mail');
    const text = mails[0]!.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))); // quoted-printable
    const code = /Confirmation code: ([0-9a-f]{24})/.exec(text)?.[1];
    assert.ok(code, mails[0]!.raw);
    // unconfirmed: a notification writes no delivery for it
    const first = await h.database.db.transaction().execute((trx) => insertNotifications(trx, [produced(`before-${account}`, account)]));
    assert.deepEqual(first, { inserted: [`before-${account}`], deliveries: 0 });
    const listed = (await h.server.inject({ method: 'GET', url: `/accounts/${account}/subscriptions` })).json();
    assert.equal(listed[0].confirmed, false);
    const confirm = (c: string) => h.server.inject({ method: 'POST', url: `/accounts/${account}/subscriptions/${created.body.id}/confirm`, payload: { code: c } });
    const wrong = await confirm('0'.repeat(24));
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.json().message, /^code: not the confirmation code/);
    assert.equal((await confirm(code!)).statusCode, 204);
    const second = await h.database.db.transaction().execute((trx) => insertNotifications(trx, [produced(`after-${account}`, account)]));
    assert.equal(second.deliveries, 1);
    assert.equal(h.inbox.filter((m) => m.to.includes(mailbox)).length, 1, 'the confirmation mail was sent once');
  });
});
