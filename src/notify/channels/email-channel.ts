/**
 * Email delivery through `nodemailer` over SMTP_URL, from SMTP_FROM: a plain-text mail whose subject is the
 * notification's title and message, with a Message-ID derived from the notification and subscription so a
 * redelivery is recognisable as the same mail. Permanent SMTP rejections (5xx, e.g. 550 no such mailbox) are
 * final; transient ones (4xx), connection problems, timeouts and authentication failures (the operator's to fix)
 * are retryable. Errors never show the SMTP URL (it carries the password).
 *
 * @example
 *   const email = new EmailChannel({ smtpUrl: config.notifyChannels.smtp.url, from: config.notifyChannels.smtp.from });
 *   email.missingConfiguration(); // 'SMTP_URL' when unset
 *   await email.deliver(notification, { subscriptionId, channel: 'email', target: 'trader@example.com', secret: null });
 */
import nodemailer, { type NodemailerError } from 'nodemailer';
import type { DeliveryResult, DeliveryTarget, NotificationChannel, OutgoingNotification } from './channel.js';
import { notificationTitle } from './notification-title.js';

export interface EmailChannelOptions {
  smtpUrl: string | null;
  /** `address` or `Name <address>` */
  from: string | null;
  /** connect, greeting and idle-socket timeout, and the deadline of one whole send; default 10 s */
  timeoutMs?: number;
}

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A single plain address (no display name, no list, no quoting, no IP-literal domain), as mail systems accept it. */
export function isEmailAddress(target: string): boolean {
  if (target.length > 254) return false;
  const at = target.lastIndexOf('@');
  if (at < 1) return false;
  const local = target.slice(0, at);
  const labels = target.slice(at + 1).split('.');
  return local.length <= 64 && LOCAL_PART.test(local) && labels.length >= 2 && labels.every((l) => DOMAIN_LABEL.test(l)) && /[A-Za-z]/.test(labels.at(-1)!);
}

export interface EmailContent {
  subject: string;
  text: string;
  messageId: string;
}

/** Subject, body and Message-ID of a notification's mail. */
export function emailContent(notification: OutgoingNotification, subscriptionId: string): EmailContent {
  const title = notificationTitle(notification.type);
  const lines = [notification.message, ''];
  if (typeof notification.metadata.orderId === 'string') lines.push(`Order: ${notification.metadata.orderId}`);
  lines.push(`Account: ${notification.account}`, `Time: ${notification.timestamp}`, '', `Notification ${notification.id}`);
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  const subject = `${title}: ${notification.message}`.replace(/[\r\n]+/g, ' ').slice(0, 200);
  return { subject, text: `${lines.join('\n')}\n`, messageId: `<${safe(notification.id)}.${safe(subscriptionId)}@batchbook.notifications>` };
}

export class EmailChannel implements NotificationChannel {
  readonly name = 'email' as const;
  private readonly timeoutMs: number;

  constructor(private readonly options: EmailChannelOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  missingConfiguration(): string | null {
    if (this.options.smtpUrl === null) return 'SMTP_URL';
    if (this.options.from === null) return 'SMTP_FROM';
    return null;
  }

  async validateTarget(target: string): Promise<string | null> {
    return isEmailAddress(target) ? null : 'email target: expected one email address such as trader@example.com';
  }

  async deliver(notification: OutgoingNotification, target: DeliveryTarget): Promise<DeliveryResult> {
    const missing = this.missingConfiguration();
    if (missing !== null) return { ok: false, retryable: true, error: `email is not configured (${missing})` };
    if (!isEmailAddress(target.target)) return { ok: false, retryable: false, error: 'email target: not a single email address' };
    const content = emailContent(notification, target.subscriptionId);
    return this.send({ to: target.target, subject: content.subject, text: content.text, messageId: content.messageId, headers: { 'X-Batchbook-Notification-Id': notification.id } });
  }

  /** The one confirmation mail of a new email subscription: its code, and how to confirm with it. */
  async sendConfirmation(target: string, subscription: { id: string; account: string; code: string }): Promise<DeliveryResult> {
    const missing = this.missingConfiguration();
    if (missing !== null) return { ok: false, retryable: false, error: `email is not configured (${missing})` };
    const text = [
      `Someone asked to send the notifications of account ${subscription.account} to this address.`,
      '',
      `Confirmation code: ${subscription.code}`,
      '',
      `To confirm, POST {"code": "${subscription.code}"} to /accounts/${subscription.account}/subscriptions/${subscription.id}/confirm`,
      'on the server you subscribed with. If this was not you, ignore this mail: nothing is sent to you unless you confirm.',
      '',
    ].join('\n');
    const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
    return this.send({ to: target, subject: 'Confirm your batchbook notifications', text, messageId: `<confirm.${safe(subscription.id)}@batchbook.notifications>` });
  }

  /**
   * One mail through a fresh SMTP connection. Once the message body has been handed to the server, a timeout or a
   * lost connection leaves the outcome unknown: the server may have accepted it. Such an attempt is final (not
   * retried), so a slow server never makes a subscriber receive the same mail twice; before that point (no
   * connection, no greeting, a stall before or during the body) nothing was accepted and the attempt is retryable.
   */
  async send(mail: { to: string; subject: string; text: string; messageId: string; headers?: Record<string, string> }): Promise<DeliveryResult> {
    let bodyHandedOver = false;
    const ignore = () => undefined;
    const transport = nodemailer.createTransport({
      url: this.options.smtpUrl!,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
      dnsTimeout: this.timeoutMs,
      // nodemailer logs the end of the message stream (the terminating dot written): the point of no return
      logger: {
        level: ignore, trace: ignore, debug: ignore, warn: ignore, error: ignore, fatal: ignore,
        info: (entry: unknown) => {
          if (typeof entry === 'object' && entry !== null && (entry as { tnx?: unknown }).tnx === 'message' && 'outByteCount' in entry) bodyHandedOver = true;
        },
      },
    } as Parameters<typeof nodemailer.createTransport>[0]);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    const unknownOutcome = (why: string): DeliveryResult => ({ ok: false, retryable: false, error: `${why} after the message was sent; not retried, so it is never delivered twice` });
    try {
      const sent = transport.sendMail({ from: this.options.from!, to: mail.to, subject: mail.subject, text: mail.text, messageId: mail.messageId, headers: mail.headers ?? {} });
      sent.catch(() => undefined); // settled below, or abandoned at the deadline
      const outcome = await Promise.race([sent.then(() => 'sent' as const), deadline]);
      if (outcome === 'timeout') {
        if (bodyHandedOver) return unknownOutcome(`SMTP server did not confirm within ${this.timeoutMs} ms`);
        return { ok: false, retryable: true, error: `SMTP server did not finish within ${this.timeoutMs} ms` };
      }
      return { ok: true };
    } catch (error) {
      const judged = judgeSmtpError(error as NodemailerError, this.options.smtpUrl!);
      // a reply to the message itself (e.g. 451 after the dot) is the server's word; a lost connection is not
      if (bodyHandedOver && (error as NodemailerError).responseCode === undefined && !judged.ok) return unknownOutcome(judged.error);
      return judged;
    } finally {
      clearTimeout(timer);
      transport.close();
    }
  }
}

/** Permanent SMTP rejections are final; everything else (4xx, connection, timeout, auth) is retryable. */
export function judgeSmtpError(error: NodemailerError, smtpUrl: string): DeliveryResult {
  let password = '';
  try {
    password = decodeURIComponent(new URL(smtpUrl).password);
  } catch {
    password = '';
  }
  const scrub = (s: string) => (password === '' ? s : s.split(password).join('***'));
  const detail = scrub(String(error.response ?? error.message ?? error).replace(/\s+/g, ' ').slice(0, 200));
  const error_ = error.responseCode !== undefined ? `SMTP ${error.responseCode}: ${detail}` : `SMTP ${error.code ?? 'error'}: ${detail}`;
  if (error.code === 'EAUTH') return { ok: false, retryable: true, error: error_ };
  const permanent = error.permanent ?? (error.responseCode !== undefined && error.responseCode >= 500 && error.responseCode !== 503);
  return { ok: false, retryable: !permanent, error: error_ };
}
