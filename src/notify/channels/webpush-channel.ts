/**
 * Web push delivery: the notification JSON, encrypted for the browser's subscription keys (RFC 8291 aes128gcm) and
 * signed with our VAPID key (RFC 8292), both by the `web-push` package; the request itself goes through the
 * guarded HTTP client (host checked and pinned, no redirects, one deadline), so a push endpoint cannot point the
 * node at its private network. 2xx delivered; 404/410 gone (the browser dropped the subscription); 429/5xx,
 * timeouts and network errors retryable; other statuses final.
 *
 * VAPID keys come from VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY, or, when unset, from `vapid-keys.json` in DATA_DIR,
 * generated on first start and reused afterwards (browsers subscribed with the old public key keep working).
 *
 * @example
 *   const vapid = await loadVapidKeys(config.notifyChannels.vapid, config.dataDir);
 *   const webpush = new WebPushChannel({ vapid, allowPrivateTargets });
 *   webpush.vapidPublicKey(); // for GET /notifications/vapid-public-key
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import webpush from 'web-push';
import type { DeliveryResult, DeliveryTarget, NotificationChannel, OutgoingNotification } from './channel.js';
import { guardedRequest, parseRetryAfter } from './guarded-http.js';
import { hostOf, resolveTargetHost, TargetAddressError, type ResolveHost } from './target-address.js';
import { webhookBody } from './webhook-channel.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  /** mailto: or https: contact the push services see */
  subject: string;
}

export const VAPID_KEYS_FILE = 'vapid-keys.json';

const isB64Url = (v: unknown, bytes: number): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64url').length === bytes;

async function readKeyFile(file: string): Promise<{ publicKey: string; privateKey: string } | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const parsed = JSON.parse(text) as { publicKey?: unknown; privateKey?: unknown };
  if (!isB64Url(parsed.publicKey, 65) || !isB64Url(parsed.privateKey, 32)) throw new Error(`${file}: expected {publicKey, privateKey} as base64url VAPID keys`);
  return { publicKey: parsed.publicKey, privateKey: parsed.privateKey };
}

/**
 * The configured VAPID keys, or the pair kept in `DATA_DIR/vapid-keys.json` (created once, mode 0600; when two
 * processes start together, the first write wins and both use it).
 */
export async function loadVapidKeys(configured: { publicKey: string | null; privateKey: string | null; subject: string }, dataDir: string): Promise<VapidKeys> {
  if (configured.publicKey !== null && configured.privateKey !== null) return { publicKey: configured.publicKey, privateKey: configured.privateKey, subject: configured.subject };
  const file = join(dataDir, VAPID_KEYS_FILE);
  const existing = await readKeyFile(file);
  if (existing) return { ...existing, subject: configured.subject };
  await mkdir(dataDir, { recursive: true });
  const generated = webpush.generateVAPIDKeys();
  // written whole under a private name, then linked into place: a reader never sees a half-written file, and
  // when two processes race, link fails for the second (EEXIST), which then uses the winner's pair
  const staging = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(staging, `${JSON.stringify({ publicKey: generated.publicKey, privateKey: generated.privateKey }, null, 2)}\n`, { mode: 0o600 });
  try {
    await link(staging, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { ...(await readKeyFile(file))!, subject: configured.subject };
  } finally {
    await unlink(staging);
  }
  return { publicKey: generated.publicKey, privateKey: generated.privateKey, subject: configured.subject };
}

export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1)$/i;

/** The PushSubscription when `target` is an acceptable one, otherwise why not (no DNS yet). */
export function parsePushSubscription(target: string, allowPrivate: boolean): PushSubscriptionJson | string {
  if (target.length > 4096) return 'webpush target: at most 4096 characters';
  let value: unknown;
  try {
    value = JSON.parse(target);
  } catch {
    return 'webpush target: expected the PushSubscription JSON ({endpoint, keys: {p256dh, auth}})';
  }
  const sub = value as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  if (typeof value !== 'object' || value === null || typeof sub.endpoint !== 'string') return 'webpush target: expected the PushSubscription JSON ({endpoint, keys: {p256dh, auth}})';
  let url: URL;
  try {
    url = new URL(sub.endpoint);
  } catch {
    return 'webpush target: endpoint is not a URL';
  }
  const loopbackHttp = url.protocol === 'http:' && allowPrivate && LOOPBACK.test(hostOf(url));
  if (url.protocol !== 'https:' && !loopbackHttp) return 'webpush target: endpoint must be an https URL';
  if (url.username !== '' || url.password !== '') return 'webpush target: endpoint must not carry credentials';
  if (!isB64Url(sub.keys?.p256dh, 65) || Buffer.from(sub.keys!.p256dh as string, 'base64url')[0] !== 4) return 'webpush target: keys.p256dh must be a base64url P-256 public key (65 bytes)';
  if (!isB64Url(sub.keys?.auth, 16)) return 'webpush target: keys.auth must be a base64url 16-byte secret';
  return { endpoint: sub.endpoint, keys: { p256dh: sub.keys!.p256dh as string, auth: sub.keys!.auth as string } };
}

export interface WebPushChannelOptions {
  vapid: VapidKeys;
  allowPrivateTargets: boolean;
  /** default 10 s */
  timeoutMs?: number;
  /** how long the push service keeps an undelivered message, seconds; default 24 h */
  ttlSeconds?: number;
  resolve?: ResolveHost;
}

export class WebPushChannel implements NotificationChannel {
  readonly name = 'webpush' as const;

  constructor(private readonly options: WebPushChannelOptions) {}

  /** The application server key browsers subscribe with (`GET /notifications/vapid-public-key`). */
  vapidPublicKey(): string {
    return this.options.vapid.publicKey;
  }

  missingConfiguration(): string | null {
    return null;
  }

  async validateTarget(target: string): Promise<string | null> {
    const sub = parsePushSubscription(target, this.options.allowPrivateTargets);
    if (typeof sub === 'string') return sub;
    try {
      await resolveTargetHost(hostOf(new URL(sub.endpoint)), { allowPrivate: this.options.allowPrivateTargets, resolve: this.options.resolve });
      return null;
    } catch (error) {
      if (error instanceof TargetAddressError) return `webpush target: ${error.message}`;
      throw error;
    }
  }

  async deliver(notification: OutgoingNotification, target: DeliveryTarget): Promise<DeliveryResult> {
    const sub = parsePushSubscription(target.target, this.options.allowPrivateTargets);
    if (typeof sub === 'string') return { ok: false, retryable: false, error: sub };
    const { vapid } = this.options;
    let details: ReturnType<typeof webpush.generateRequestDetails>;
    try {
      details = webpush.generateRequestDetails(sub, webhookBody(notification), {
        vapidDetails: { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
        TTL: this.options.ttlSeconds ?? 86_400,
        contentEncoding: 'aes128gcm',
        urgency: 'normal',
      });
    } catch (error) {
      return { ok: false, retryable: false, error: `webpush: cannot encrypt for this subscription (${(error as Error).message.slice(0, 120)})` };
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(details.headers)) if (name.toLowerCase() !== 'content-length') headers[name] = String(value);
    const url = new URL(sub.endpoint);
    const outcome = await guardedRequest(url, { method: 'POST', headers, body: details.body ?? Buffer.alloc(0) }, {
      allowPrivate: this.options.allowPrivateTargets,
      timeoutMs: this.options.timeoutMs ?? 10_000,
      resolve: this.options.resolve,
      maxResponseBytes: 1024,
    });
    if (outcome.kind === 'refused') return { ok: false, retryable: outcome.error.kind === 'unresolved', error: outcome.error.message };
    if (outcome.kind !== 'response') return { ok: false, retryable: true, error: outcome.error };
    return judgePushStatus(outcome.status, outcome.headers['retry-after'], url.host);
  }
}

/** 2xx delivered; 404/410 gone; 408/429/5xx retryable (Retry-After honoured); anything else final. */
export function judgePushStatus(status: number, retryAfter: string | string[] | undefined, host: string): DeliveryResult {
  if (status >= 200 && status <= 299) return { ok: true };
  const error = `push service ${host} answered HTTP ${status}`;
  if (status === 404 || status === 410) return { ok: false, retryable: false, gone: true, error: `${error} (subscription expired)` };
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    return { ok: false, retryable: true, error, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  return { ok: false, retryable: false, error };
}
