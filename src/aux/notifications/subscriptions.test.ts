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
import { SMTPServer } from 'smtp-server';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadConfig } from '../../config/config.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { migrateToLatest } from '../../db/migrate.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { buildNotificationChannels } from '../../notify/channels/notification-channels.js';
import { registerNotificationRoutes } from './routes.js';
import { SubscriptionService } from './subscription-service.js';
import { subscribeTypedData } from './subscription-signatures.js';

const now = () => Math.floor(Date.now() / 1000);
const P256DH = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url');
const AUTH = Buffer.alloc(16, 9).toString('base64url');

interface Harness {
  server: HttpServer;
  database: Database;
  inbox: { to: string[]; raw: string }[];
  /** requests the local HTTP target received */
  hits: string[];
  targetUrl: string;
  close(): Promise<void>;
}

async function startHarness(): Promise<Harness> {
  const inbox: Harness['inbox'] = [];
  const smtp = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
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
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`,
    SMTP_FROM: 'batchbook <alerts@batchbook.example>',
    TELEGRAM_BOT_TOKEN: '123456789:AAabcdefghijklmnopqrstuvwxyz',
  });
  const channels = await buildNotificationChannels(config.notifyChannels, { dataDir, devnetOnly: true });
  const subscriptions = new SubscriptionService({ db: database.db, channels, contractSignatures: [] });
  registerNotificationRoutes(server, { db: database.db, subscriptions, enabled: true, vapidPublicKey: () => null });
  return {
    server,
    database,
    inbox,
    hits,
    targetUrl: `http://127.0.0.1:${(target.address() as { port: number }).port}`,
    async close() {
      await server.close();
      await database.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await new Promise<void>((resolve) => target.close(() => resolve()));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function subscribe(h: Harness, signer: PrivateKeyAccount, body: { channel: string; target: string; types?: string[] }) {
  const deadline = now() + 600;
  const signature = await signer.signTypedData(subscribeTypedData({ account: signer.address, channel: body.channel, target: body.target, deadline }));
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
