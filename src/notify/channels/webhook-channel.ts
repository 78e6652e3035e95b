/**
 * Webhook delivery (Standard Webhooks): a POST whose body is exactly the notification JSON, signed with the
 * subscription's `whsec_` secret (checked by the `standardwebhooks` package, signed with node:crypto; `webhook-id` = the notification id, so
 * receivers deduplicate; `webhook-timestamp`; `webhook-signature` = `v1,<base64 HMAC-SHA256>`).
 * 2xx = delivered; 408, 429, 5xx, timeouts and network errors are retryable (Retry-After honoured); any other
 * status (4xx, and 3xx since redirects are not followed) is not. Targets are http(s) URLs whose host must not be
 * (or resolve to) a private address unless private targets are allowed; that is checked again at every delivery.
 *
 * @example
 *   const webhook = new WebhookChannel({ allowPrivateTargets: false });
 *   await webhook.validateTarget('https://hooks.example/batchbook'); // null
 *   const secret = generateWebhookSecret(); // 'whsec_...'
 *   await webhook.deliver(notification, { subscriptionId, channel: 'webhook', target, secret });
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { DeliveryResult, DeliveryTarget, NotificationChannel, OutgoingNotification } from './channel.js';
import { guardedRequest, parseRetryAfter } from './guarded-http.js';
import { hostOf, resolveTargetHost, TargetAddressError, type ResolveHost } from './target-address.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** a receiver must accept the connection within this, and start answering within WEBHOOK_FIRST_BYTE_MS of the request */
export const WEBHOOK_CONNECT_MS = 3_000;
export const WEBHOOK_FIRST_BYTE_MS = 5_000;
const MAX_URL_LENGTH = 2048;

export interface WebhookChannelOptions {
  /** NOTIFY_ALLOW_PRIVATE_TARGETS (see resolveAllowPrivateTargets) */
  allowPrivateTargets: boolean;
  /** default 10 s */
  timeoutMs?: number;
  /** default 3 s and 5 s */
  connectTimeoutMs?: number;
  firstByteTimeoutMs?: number;
  /** default: the system resolver (tests inject one to play DNS) */
  resolve?: ResolveHost;
  /** default: Date.now */
  now?: () => number;
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (shown to the subscriber once). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The webhook body: the notification's spec fields in spec order, nothing else. */
export function webhookBody(notification: OutgoingNotification): string {
  const { id, account, type, message, timestamp, metadata } = notification;
  return JSON.stringify({ id, account, type, message, timestamp, metadata });
}

/** Signing keys kept per secret (a secret is decoded and checked once). */
const SIGNING_KEYS_KEPT = 10_000;

/**
 * The key of a `whsec_` secret, or null when the standardwebhooks package refuses the secret. Standard Webhooks
 * v1 signs with HMAC-SHA256 over `id.timestamp.body` under the base64-decoded secret; the package checks the
 * secret, node:crypto computes the HMAC (the package's pure-JS hash was a fifth of a delivery's work).
 */
function decodeSigningKey(secret: string): Buffer | null {
  try {
    new Webhook(secret);
  } catch {
    return null;
  }
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, as `new Webhook(secret).sign(id, timestamp, body)` makes it. */
export function signWebhook(key: Buffer, id: string, timestamp: Date, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${Math.floor(timestamp.getTime() / 1000)}.${body}`).digest('base64')}`;
}

/** The parsed URL when `target` is an acceptable webhook URL, otherwise why not. */
function parseWebhookUrl(target: string): URL | string {
  if (target.length > MAX_URL_LENGTH) return `webhook target: at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'webhook target: expected an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'webhook target: expected an http(s) URL';
  if (url.username !== '' || url.password !== '') return 'webhook target: credentials in the URL are not accepted (the target is listed back; the signature authenticates us)';
  if (url.hostname === '') return 'webhook target: the URL has no host';
  return url;
}

export class WebhookChannel implements NotificationChannel {
  readonly name = 'webhook' as const;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  /** connections to receivers are kept alive between deliveries (idle ones close after 5 s and never hold the process open) */
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 16, timeout: 5_000 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 16, timeout: 5_000 }),
  };

  private readonly signingKeys = new Map<string, Buffer | null>();

  constructor(private readonly options: WebhookChannelOptions) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  private signingKey(secret: string): Buffer | null {
    let key = this.signingKeys.get(secret);
    if (key === undefined) {
      if (this.signingKeys.size >= SIGNING_KEYS_KEPT) this.signingKeys.clear();
      key = decodeSigningKey(secret);
      this.signingKeys.set(secret, key);
    }
    return key;
  }

  /** Closes the pooled connections (at shutdown). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  missingConfiguration(): string | null {
    return null;
  }

  async validateTarget(target: string): Promise<string | null> {
    const url = parseWebhookUrl(target);
    if (typeof url === 'string') return url;
    try {
      await resolveTargetHost(hostOf(url), { allowPrivate: this.options.allowPrivateTargets, resolve: this.options.resolve });
      return null;
    } catch (error) {
      if (error instanceof TargetAddressError) return `webhook target: ${error.message}`;
      throw error;
    }
  }

  async deliver(notification: OutgoingNotification, target: DeliveryTarget): Promise<DeliveryResult> {
    const url = parseWebhookUrl(target.target);
    if (typeof url === 'string') return { ok: false, retryable: false, error: url };
    if (target.secret === null) return { ok: false, retryable: false, error: 'webhook subscription has no signing secret' };
    const key = this.signingKey(target.secret);
    if (key === null) return { ok: false, retryable: false, error: 'webhook signing secret is malformed' };
    const body = webhookBody(notification);
    const timestamp = new Date(this.now());
    const signature = signWebhook(key, notification.id, timestamp, body);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'batchbook-webhooks/1',
      'webhook-id': notification.id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    };
    const outcome = await guardedRequest(url, { method: 'POST', headers, body }, {
      allowPrivate: this.options.allowPrivateTargets,
      timeoutMs: this.timeoutMs,
      connectTimeoutMs: this.options.connectTimeoutMs ?? WEBHOOK_CONNECT_MS,
      firstByteTimeoutMs: this.options.firstByteTimeoutMs ?? WEBHOOK_FIRST_BYTE_MS,
      resolve: this.options.resolve,
      maxResponseBytes: 1024,
      agents: this.agents,
    });
    if (outcome.kind === 'refused') return { ok: false, retryable: outcome.error.kind === 'unresolved', error: outcome.error.message };
    if (outcome.kind !== 'response') return { ok: false, retryable: true, error: outcome.error };
    return judgeWebhookStatus(outcome.status, outcome.headers['retry-after'], url.host);
  }
}

/** 2xx delivered; 408/429/5xx retryable (with Retry-After); anything else final. */
export function judgeWebhookStatus(status: number, retryAfter: string | string[] | undefined, host: string): DeliveryResult {
  if (status >= 200 && status <= 299) return { ok: true };
  const retryAfterMs = parseRetryAfter(retryAfter);
  const error = status >= 300 && status <= 399 ? `${host} answered HTTP ${status} (redirects are not followed)` : `${host} answered HTTP ${status}`;
  const retryable = status === 408 || status === 429 || status >= 500;
  return { ok: false, retryable, error, ...(retryable && retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}
