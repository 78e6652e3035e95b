/**
 * The web push channel against a local push endpoint that acts as the push service and the browser together: it
 * checks the VAPID JWT (ES256 over our public key, audience = the endpoint's origin) and decrypts the RFC 8291
 * aes128gcm payload with the subscription's own private key and auth secret (decryption written here from the
 * RFC, independent of the sender's code). Plus VAPID key persistence in DATA_DIR and subscription validation.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv, createECDH, createHmac, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryTarget } from './channel.js';
import { SAMPLE_NOTIFICATION } from '../../../test/fixtures/sample-notification.js';
import { judgePushStatus, loadVapidKeys, parsePushSubscription, VAPID_KEYS_FILE, WebPushChannel, type VapidKeys } from './webpush-channel.js';
import { startProviderServer, type ProviderReply, type ProviderServer, type RecordedRequest } from '../../providers/test-provider-server.js';

const notification = SAMPLE_NOTIFICATION;

const hmac = (key: Buffer, ...data: Buffer[]) => createHmac('sha256', key).update(Buffer.concat(data)).digest();

/** RFC 8291 §3.4 + RFC 8188: decrypts a single-record aes128gcm body with the user agent's keys. */
function decryptAes128gcm(body: Buffer, ua: ECDH, authSecret: Buffer): string {
  const salt = body.subarray(0, 16);
  const idLength = body[20]!;
  const senderPublic = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  const ecdhSecret = ua.computeSecret(senderPublic);
  const prkKey = hmac(authSecret, ecdhSecret);
  const ikm = hmac(prkKey, Buffer.from('WebPush: info\0'), ua.getPublicKey(), senderPublic, Buffer.from([1]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0'), Buffer.from([1])).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0'), Buffer.from([1])).subarray(0, 12);
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (padded[end] === 0) end -= 1;
  assert.equal(padded[end], 2, 'last-record padding delimiter');
  return padded.subarray(0, end).toString('utf8');
}

/** Verifies `Authorization: vapid t=<jwt>, k=<key>` and returns the JWT claims. */
function verifyVapid(header: string | undefined, expectedKey: string): Record<string, unknown> {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(header ?? '');
  assert.ok(m, `Authorization: ${header}`);
  assert.equal(m[2], expectedKey);
  const [h, p, s] = m[1]!.split('.') as [string, string, string];
  const raw = Buffer.from(expectedKey, 'base64url');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') }, format: 'jwk' });
  assert.equal(verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url')), true, 'VAPID JWT signature');
  return JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A browser's push subscription: a fresh P-256 key pair and auth secret. */
function browserSubscription(endpoint: string) {
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16);
  const json = JSON.stringify({ endpoint, expirationTime: null, keys: { p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } });
  return { ua, auth, json };
}

describe('web push channel', () => {
  let pushService: ProviderServer;
  let reply: (r: RecordedRequest) => ProviderReply = () => ({ status: 201 });
  let dataDir: string;
  let vapid: VapidKeys;

  before(async () => {
    pushService = await startProviderServer((r) => reply(r));
    dataDir = mkdtempSync(join(tmpdir(), 'batchbook-vapid-'));
    vapid = await loadVapidKeys({ publicKey: null, privateKey: null, subject: 'mailto:ops@batchbook.example' }, dataDir);
  });
  after(async () => {
    await pushService.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const target = (json: string): DeliveryTarget => ({ subscriptionId: 's1', channel: 'webpush', target: json, secret: null });

  it('delivers the notification encrypted (aes128gcm) for the subscription and signed with our VAPID key', async () => {
    reply = () => ({ status: 201 });
    const browser = browserSubscription(`${pushService.url}/push/abc123`);
    const channel = new WebPushChannel({ vapid, allowPrivateTargets: true });
    assert.equal(await channel.validateTarget(browser.json), null);
    assert.deepEqual(await channel.deliver(notification, target(browser.json)), { ok: true });
    const request = pushService.requests.at(-1)!;
    assert.equal(request.path, '/push/abc123');
    assert.equal(request.headers['content-encoding'], 'aes128gcm');
    assert.equal(request.headers['content-type'], 'application/octet-stream');
    assert.equal(request.headers.ttl, '86400');
    assert.ok(!request.bytes.includes(Buffer.from('WETH')), 'the payload is not plaintext');
    assert.deepEqual(JSON.parse(decryptAes128gcm(request.bytes, browser.ua, browser.auth)), notification);
    const claims = verifyVapid(request.headers.authorization, vapid.publicKey);
    assert.equal(claims.aud, pushService.url);
    assert.equal(claims.sub, 'mailto:ops@batchbook.example');
    assert.ok(Number(claims.exp) > Date.now() / 1000);
  });

  it('another browser\'s keys cannot decrypt it (the check can fail)', async () => {
    reply = () => ({ status: 201 });
    const browser = browserSubscription(`${pushService.url}/push/other`);
    await new WebPushChannel({ vapid, allowPrivateTargets: true }).deliver(notification, target(browser.json));
    const stranger = browserSubscription(`${pushService.url}/push/x`);
    assert.throws(() => decryptAes128gcm(pushService.requests.at(-1)!.bytes, stranger.ua, stranger.auth));
  });

  it('404 and 410 mean the subscription is gone; 429 and 5xx are retryable; other 4xx final', async () => {
    const browser = browserSubscription(`${pushService.url}/push/abc`);
    const channel = new WebPushChannel({ vapid, allowPrivateTargets: true });
    const host = new URL(pushService.url).host;
    reply = () => ({ status: 410 });
    assert.deepEqual(await channel.deliver(notification, target(browser.json)), { ok: false, retryable: false, gone: true, error: `push service ${host} answered HTTP 410 (subscription expired)` });
    reply = () => ({ status: 404 });
    assert.equal((await channel.deliver(notification, target(browser.json)) as { gone?: boolean }).gone, true);
    reply = () => ({ status: 429, headers: { 'retry-after': '30' } });
    assert.deepEqual(await channel.deliver(notification, target(browser.json)), { ok: false, retryable: true, retryAfterMs: 30_000, error: `push service ${host} answered HTTP 429` });
    reply = () => ({ status: 503 });
    assert.deepEqual(await channel.deliver(notification, target(browser.json)), { ok: false, retryable: true, error: `push service ${host} answered HTTP 503` });
    assert.deepEqual(judgePushStatus(413, undefined, 'h'), { ok: false, retryable: false, error: 'push service h answered HTTP 413' });
  });

  it('a push service that never answers is a retryable timeout', async () => {
    reply = () => 'hang';
    const browser = browserSubscription(`${pushService.url}/push/slow`);
    const result = await new WebPushChannel({ vapid, allowPrivateTargets: true, timeoutMs: 300 }).deliver(notification, target(browser.json));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, true);
  });

  it('validates the PushSubscription JSON', async () => {
    const strict = new WebPushChannel({ vapid, allowPrivateTargets: false, resolve: async () => [{ address: '142.250.74.10', family: 4 }] });
    const lax = new WebPushChannel({ vapid, allowPrivateTargets: true });
    const good = browserSubscription('https://fcm.googleapis.com/fcm/send/abc');
    assert.equal(await strict.validateTarget(good.json), null);
    const keys = JSON.parse(good.json).keys as { p256dh: string; auth: string };
    const cases: Array<[WebPushChannel, string, RegExp]> = [
      [strict, 'not json', /expected the PushSubscription JSON/],
      [strict, '"https://push.example"', /expected the PushSubscription JSON/],
      [strict, JSON.stringify({ endpoint: 'http://push.example/x', keys }), /endpoint must be an https URL/],
      [strict, JSON.stringify({ endpoint: `${pushService.url}/x`, keys }), /endpoint must be an https URL/],
      [lax, JSON.stringify({ endpoint: 'http://push.example/x', keys }), /endpoint must be an https URL/],
      [strict, JSON.stringify({ endpoint: 'https://push.example/x', keys: { ...keys, p256dh: 'abc' } }), /keys\.p256dh must be/],
      [strict, JSON.stringify({ endpoint: 'https://push.example/x', keys: { ...keys, auth: Buffer.alloc(8).toString('base64url') } }), /keys\.auth must be/],
      [strict, JSON.stringify({ endpoint: 'https://127.0.0.1/x', keys }), /127\.0\.0\.1 is not a public address/],
    ];
    for (const [channel, json, expected] of cases) assert.match((await channel.validateTarget(json)) ?? 'accepted', expected, json);
    assert.equal(typeof parsePushSubscription(JSON.stringify({ endpoint: `${pushService.url}/x`, keys }), true), 'object');
  });

  it('generates a VAPID key pair into DATA_DIR once and reuses it; configured keys win', async () => {
    const file = join(dataDir, VAPID_KEYS_FILE);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { publicKey: string; privateKey: string };
    assert.equal(stored.publicKey, vapid.publicKey);
    assert.equal(Buffer.from(stored.publicKey, 'base64url').length, 65);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const again = await loadVapidKeys({ publicKey: null, privateKey: null, subject: 'mailto:x@batchbook.example' }, dataDir);
    assert.deepEqual(again, { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:x@batchbook.example' });
    assert.equal(new WebPushChannel({ vapid: again, allowPrivateTargets: true }).vapidPublicKey(), vapid.publicKey);
    const configured = await loadVapidKeys({ publicKey: 'P', privateKey: 'K', subject: 's' }, dataDir);
    assert.deepEqual(configured, { publicKey: 'P', privateKey: 'K', subject: 's' });
    const other = mkdtempSync(join(tmpdir(), 'batchbook-vapid-'));
    try {
      const [a, b] = await Promise.all([loadVapidKeys({ publicKey: null, privateKey: null, subject: 's' }, join(other, 'nested')), loadVapidKeys({ publicKey: null, privateKey: null, subject: 's' }, join(other, 'nested'))]);
      assert.equal(a.publicKey, b.publicKey, 'two processes starting together agree on one pair');
      writeFileSync(join(other, VAPID_KEYS_FILE), '{"publicKey":"x"}');
      await assert.rejects(loadVapidKeys({ publicKey: null, privateKey: null, subject: 's' }, other), /vapid-keys\.json: expected \{publicKey, privateKey\}/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
