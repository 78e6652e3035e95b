/**
 * The webhook channel against a real local HTTP receiver that verifies each Standard Webhooks signature with the
 * `standardwebhooks` package's own verifier, plus the target-address policy (private ranges, DNS rebinding).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { DeliveryTarget, OutgoingNotification } from './channel.js';
import { SAMPLE_NOTIFICATION } from '../../../test/fixtures/sample-notification.js';
import { generateWebhookSecret, judgeWebhookStatus, webhookBody, WebhookChannel } from './webhook-channel.js';
import { parseRetryAfter } from './guarded-http.js';
import { embeddedIpv4, isPublicAddress, resolveAllowPrivateTargets, type ResolveHost } from './target-address.js';
import { startProviderServer, type ProviderReply, type ProviderServer, type RecordedRequest } from '../../providers/test-provider-server.js';

const notification = SAMPLE_NOTIFICATION;

/** A resolver that plays DNS: each name answers the next entry of its list (the last one repeats). */
function fakeDns(answers: Record<string, string[][]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const used = calls.filter((h) => h === host).length - 1;
    const addresses = list[Math.min(used, list.length - 1)]!;
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('webhook channel', () => {
  let receiver: ProviderServer;
  let reply: (r: RecordedRequest) => ProviderReply;
  const secret = generateWebhookSecret();
  /** what the receiver's verifier said about each request */
  const verdicts: Array<'valid' | string> = [];
  const target = (url: string, s: string | null = secret): DeliveryTarget => ({ subscriptionId: 'sub-1', channel: 'webhook', target: url, secret: s });

  before(async () => {
    receiver = await startProviderServer((request) => {
      try {
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
        verdicts.push('valid');
      } catch (error) {
        verdicts.push((error as Error).message);
      }
      return reply(request);
    });
  });
  after(async () => {
    await receiver.close();
  });

  it('POSTs exactly the notification as JSON, signed so that the standardwebhooks verifier accepts it', async () => {
    reply = () => ({ status: 204 });
    const channel = new WebhookChannel({ allowPrivateTargets: true });
    const result = await channel.deliver(notification, target(`${receiver.url}/hooks/in?via=batchbook`));
    assert.deepEqual(result, { ok: true });
    const request = receiver.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/hooks/in');
    assert.equal(request.query.get('via'), 'batchbook');
    assert.equal(verdicts.at(-1), 'valid');
    assert.equal(request.headers['content-type'], 'application/json');
    const body = JSON.parse(request.body) as OutgoingNotification;
    assert.deepEqual(body, notification);
    assert.equal(body.id, request.headers['webhook-id']);
    assert.equal(typeof body.metadata.chainId, 'number');
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+={0,2}$/);
    assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
  });

  it('the body carries only the spec fields, in spec order', () => {
    const extra = { ...notification, subscriptionSecret: 'x' } as OutgoingNotification;
    assert.equal(webhookBody(extra), JSON.stringify(notification));
  });

  it('a signature made with another secret is rejected by the receiver (the check can fail)', async () => {
    reply = (r) => ({ status: verdicts.at(-1) === 'valid' ? 204 : 401 });
    const channel = new WebhookChannel({ allowPrivateTargets: true });
    const result = await channel.deliver(notification, target(`${receiver.url}/hooks/in`, generateWebhookSecret()));
    assert.notEqual(verdicts.at(-1), 'valid');
    assert.deepEqual(result, { ok: false, retryable: false, error: `${new URL(receiver.url).host} answered HTTP 401` });
  });

  it('5xx, 408 and 429 are retryable and honour Retry-After; other 4xx are final', async () => {
    const channel = new WebhookChannel({ allowPrivateTargets: true });
    const cases: Array<[ProviderReply, boolean, number | undefined]> = [
      [{ status: 503, headers: { 'retry-after': '7' } }, true, 7000],
      [{ status: 500 }, true, undefined],
      [{ status: 429, headers: { 'retry-after': '2' } }, true, 2000],
      [{ status: 408 }, true, undefined],
      [{ status: 400 }, false, undefined],
      [{ status: 404 }, false, undefined],
      [{ status: 410 }, false, undefined],
    ];
    for (const [answer, retryable, retryAfterMs] of cases) {
      reply = () => answer;
      const result = await channel.deliver(notification, target(`${receiver.url}/hooks/in`));
      const status = (answer as { status: number }).status;
      assert.equal(result.ok, false, `HTTP ${status}`);
      if (result.ok) continue;
      assert.equal(result.retryable, retryable, `HTTP ${status} retryable`);
      assert.equal(result.retryAfterMs, retryAfterMs, `HTTP ${status} retryAfterMs`);
      assert.match(result.error, new RegExp(`HTTP ${status}$`));
    }
  });

  it('does not follow redirects', async () => {
    reply = (r) => (r.path === '/moved' ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } } : { status: 204 });
    const before = receiver.count('/elsewhere');
    const result = await new WebhookChannel({ allowPrivateTargets: true }).deliver(notification, target(`${receiver.url}/moved`));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, false);
    assert.match(!result.ok ? result.error : '', /302 \(redirects are not followed\)/);
    assert.equal(receiver.count('/elsewhere'), before);
  });

  it('a receiver that never answers is a retryable timeout', async () => {
    reply = () => 'hang';
    const result = await new WebhookChannel({ allowPrivateTargets: true, timeoutMs: 300 }).deliver(notification, target(`${receiver.url}/slow`));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, true);
    assert.match(!result.ok ? result.error : '', /did not answer within 300 ms/);
  });

  it('a receiver that accepts and never starts answering is cut at the first-byte timeout, long before the whole deadline', async () => {
    reply = () => 'hang';
    const result = await new WebhookChannel({ allowPrivateTargets: true, timeoutMs: 60_000, firstByteTimeoutMs: 200 }).deliver(notification, target(`${receiver.url}/tarpit`));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, true);
    assert.match(!result.ok ? result.error : '', /^127\.0\.0\.1:\d+ did not start answering within 200 ms$|^127\.0\.0\.1 did not start answering within 200 ms$/);
  });

  it('a name whose lookup never finishes is a retryable timeout too (the deadline covers DNS)', async () => {
    const result = await new WebhookChannel({ allowPrivateTargets: false, timeoutMs: 300, resolve: () => new Promise(() => {}) }).deliver(notification, target('https://stuck.example/in'));
    assert.deepEqual(result, { ok: false, retryable: true, error: 'stuck.example did not resolve within 300 ms' });
  });

  it('a receiver that is down is a retryable network error', async () => {
    const port = await closedPort();
    const result = await new WebhookChannel({ allowPrivateTargets: true }).deliver(notification, target(`http://127.0.0.1:${port}/in`));
    assert.deepEqual(result, { ok: false, retryable: true, error: '127.0.0.1: ECONNREFUSED' });
  });

  it('a subscription without a secret, or with a malformed one, is not retried', async () => {
    const channel = new WebhookChannel({ allowPrivateTargets: true });
    const none = await channel.deliver(notification, target(`${receiver.url}/in`, null));
    assert.deepEqual(none, { ok: false, retryable: false, error: 'webhook subscription has no signing secret' });
    const bad = await channel.deliver(notification, target(`${receiver.url}/in`, 'whsec_###'));
    assert.deepEqual(bad, { ok: false, retryable: false, error: 'webhook signing secret is malformed' });
  });

  it('connects to the address it checked (the lookup is pinned to the resolver answer)', async () => {
    reply = () => ({ status: 200 });
    const dns = fakeDns({ 'receiver.test': [['127.0.0.1']] });
    const port = new URL(receiver.url).port;
    const result = await new WebhookChannel({ allowPrivateTargets: true, resolve: dns }).deliver(notification, target(`http://receiver.test:${port}/pinned`));
    assert.deepEqual(result, { ok: true });
    assert.equal(receiver.requests.at(-1)!.path, '/pinned');
    assert.equal(receiver.requests.at(-1)!.headers.host, `receiver.test:${port}`);
  });

  describe('targets', () => {
    const publicDns = fakeDns({ 'hooks.example': [['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']], 'mixed.example': [['93.184.216.34', '10.0.0.7']] });
    const strict = new WebhookChannel({ allowPrivateTargets: false, resolve: publicDns });

    it('accepts a public http(s) URL', async () => {
      assert.equal(await strict.validateTarget('https://hooks.example/batchbook'), null);
      assert.equal(await strict.validateTarget('http://93.184.216.34:8080/in'), null);
    });

    it('refuses what is not an http(s) URL, or carries credentials', async () => {
      assert.equal(await strict.validateTarget('hooks.example/in'), 'webhook target: expected an http(s) URL');
      assert.equal(await strict.validateTarget('ftp://hooks.example/in'), 'webhook target: expected an http(s) URL');
      assert.match((await strict.validateTarget('https://user:pw@hooks.example/in'))!, /credentials/);
      assert.match((await strict.validateTarget(`https://hooks.example/${'a'.repeat(3000)}`))!, /at most 2048/);
    });

    it('refuses private, loopback, link-local, unique-local and multicast literals, v4 and v6', async () => {
      for (const host of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '[::1]', '[::]', '[fe80::1]', '[fd00::1]', '[ff02::1]', '[::ffff:127.0.0.1]', '[::ffff:a9fe:a9fe]', '[64:ff9b::a00:1]', '[2002:c0a8:101::1]']) {
        const why = await strict.validateTarget(`http://${host}/in`);
        assert.match(why ?? 'accepted', /not a public address.*NOTIFY_ALLOW_PRIVATE_TARGETS/, host);
      }
    });

    it('refuses a name that resolves to a private address, even among public ones', async () => {
      const local = (await new WebhookChannel({ allowPrivateTargets: false }).validateTarget('http://localhost:9/in'))!;
      assert.match(local, /localhost resolves to an address that is not public/);
      assert.ok(!/127\.0\.0\.1|::1/.test(local), 'the resolved address is never told');
      const mixed = (await strict.validateTarget('https://mixed.example/in'))!;
      assert.match(mixed, /mixed\.example resolves to an address that is not public/);
      assert.ok(!mixed.includes('10.0.0.7'), 'the resolved address is never told');
      assert.match((await strict.validateTarget('https://nowhere.example/in'))!, /nowhere\.example does not resolve \(ENOTFOUND\)/);
    });

    it('accepts loopback targets when private targets are allowed', async () => {
      assert.equal(await new WebhookChannel({ allowPrivateTargets: true }).validateTarget('http://localhost:9/in'), null);
      assert.equal(await new WebhookChannel({ allowPrivateTargets: true }).validateTarget('http://127.0.0.1:9/in'), null);
    });

    it('refuses at delivery time when the name now resolves to a private address (DNS rebinding), without connecting', async () => {
      reply = () => ({ status: 204 });
      const port = new URL(receiver.url).port;
      const dns = fakeDns({ 'rebind.example': [['93.184.216.34'], ['127.0.0.1']] });
      const channel = new WebhookChannel({ allowPrivateTargets: false, resolve: dns });
      const url = `http://rebind.example:${port}/rebound`;
      assert.equal(await channel.validateTarget(url), null);
      const result = await channel.deliver(notification, target(url));
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.retryable, false);
      assert.match(!result.ok ? result.error : '', /^rebind\.example resolves to an address that is not public/);
      assert.equal(receiver.count('/rebound'), 0);
      assert.deepEqual(dns.calls, ['rebind.example', 'rebind.example']);
    });

    it('a name that stops resolving at delivery time is retryable', async () => {
      const result = await strict.deliver(notification, target('https://gone.example/in'));
      assert.deepEqual(result, { ok: false, retryable: true, error: 'gone.example does not resolve (ENOTFOUND)' });
    });
  });
});

describe('address policy', () => {
  it('classifies addresses', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) assert.equal(isPublicAddress(a), true, a);
    for (const a of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.0.1', '169.254.1.1', '100.127.0.1', '198.18.0.1', '255.255.255.255', '239.1.1.1', '::', '::1', 'fe80::1%eth0', 'fc00::1', 'fdff::1', 'ff05::2', '::ffff:192.168.0.1', '::ffff:7f00:1', '2002:0a00:0001::1', 'not-an-ip']) assert.equal(isPublicAddress(a), false, a);
    assert.equal(isPublicAddress('172.32.0.1'), true);
  });

  it('finds the IPv4 address inside mapped, NAT64 and 6to4 IPv6 addresses', () => {
    assert.equal(embeddedIpv4('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(embeddedIpv4('::ffff:a9fe:a9fe'), '169.254.169.254');
    assert.equal(embeddedIpv4('64:ff9b::c0a8:1'), '192.168.0.1');
    assert.equal(embeddedIpv4('2002:7f00:1::'), '127.0.0.1');
    assert.equal(embeddedIpv4('2606:4700::1111'), null);
    assert.equal(embeddedIpv4('127.0.0.1'), null);
  });

  it('private targets default to allowed on a devnet-only node, unless configured', () => {
    assert.equal(resolveAllowPrivateTargets(null, true), true);
    assert.equal(resolveAllowPrivateTargets(null, false), false);
    assert.equal(resolveAllowPrivateTargets(false, true), false);
    assert.equal(resolveAllowPrivateTargets(true, false), true);
  });

  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Wed, 25 Nov 2026 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Wed, 25 Nov 2026 11:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('999999999', now), 86_400_000);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });

  it('judges statuses', () => {
    assert.deepEqual(judgeWebhookStatus(201, undefined, 'h'), { ok: true });
    assert.deepEqual(judgeWebhookStatus(301, '5', 'h'), { ok: false, retryable: false, error: 'h answered HTTP 301 (redirects are not followed)' });
    assert.deepEqual(judgeWebhookStatus(502, '5', 'h'), { ok: false, retryable: true, error: 'h answered HTTP 502', retryAfterMs: 5000 });
  });

  it('generates whsec_ secrets of 32 random bytes that the standard verifier accepts', () => {
    const a = generateWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, generateWebhookSecret());
    const body = webhookBody(notification);
    const wh = new Webhook(a);
    const ts = new Date();
    const headers = { 'webhook-id': notification.id, 'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)), 'webhook-signature': wh.sign(notification.id, ts, body) };
    assert.deepEqual(wh.verify(body, headers), notification);
  });
});
