/**
 * Telegram delivery through the Bot API `sendMessage` (`POST {apiUrl}/bot{token}/sendMessage`), as HTML with the
 * link preview off. The text is built here: every piece of notification text is HTML-escaped and the only tags
 * are the ones this module writes (`<b>`, `<code>`), so nothing a notification carries can inject markup.
 * Answers: `ok: true` delivered; 429 retryable after `parameters.retry_after`; 400 (chat not found, bad request)
 * final; 403 (bot blocked, kicked, user deactivated) final and gone; 401 (the token is wrong: operator's
 * problem), 5xx, timeouts and network errors retryable. The bot token never appears in an error.
 *
 * @example
 *   const telegram = new TelegramChannel({ botToken: config.notifyChannels.telegram.botToken, apiUrl: config.notifyChannels.telegram.apiUrl });
 *   telegram.missingConfiguration(); // 'TELEGRAM_BOT_TOKEN' when unset
 *   await telegram.deliver(notification, { subscriptionId, channel: 'telegram', target: '123456789', secret: null });
 */
import type { DeliveryResult, DeliveryTarget, NotificationChannel, OutgoingNotification } from './channel.js';

export interface TelegramChannelOptions {
  botToken: string | null;
  /** Bot API base URL without a trailing slash, e.g. https://api.telegram.org */
  apiUrl: string;
  /** default 10 s */
  timeoutMs?: number;
}

/** Telegram's limit on a message's text, in characters after entity parsing. */
const MAX_TEXT = 4096;

const TITLES: Record<string, string> = {
  order_filled: 'Order filled',
  order_partially_filled: 'Order partially filled',
  order_expired: 'Order expired',
  order_cancelled: 'Order cancelled',
  insufficient_balance: 'Insufficient balance',
  price_improvement: 'Price improvement',
};

/** Escapes text for Telegram's HTML parse mode (the three entities it requires, plus quotes for safety). */
export function escapeTelegramHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The message text: a bold title, the message, and the order id in code; all notification text escaped. */
export function telegramText(notification: OutgoingNotification): string {
  const title = TITLES[notification.type] ?? notification.type.replace(/_/g, ' ');
  const orderId = typeof notification.metadata.orderId === 'string' ? notification.metadata.orderId : null;
  const tail = orderId === null ? '' : `\n\nOrder <code>${escapeTelegramHtml(orderId)}</code>`;
  const head = `<b>${escapeTelegramHtml(title)}</b>\n`;
  const room = MAX_TEXT - head.length - tail.length;
  let message = escapeTelegramHtml(notification.message);
  if (message.length > room) message = `${message.slice(0, room - 1).replace(/&[a-z]*$/, '')}…`;
  return `${head}${message}${tail}`;
}

/** A chat id: an integer (users, groups; negative for groups and channels) or a public @channelusername. */
export function isTelegramChatId(target: string): boolean {
  return /^-?\d{1,20}$/.test(target) || /^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(target);
}

interface BotApiAnswer {
  ok?: boolean;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

export class TelegramChannel implements NotificationChannel {
  readonly name = 'telegram' as const;
  private readonly timeoutMs: number;

  constructor(private readonly options: TelegramChannelOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  missingConfiguration(): string | null {
    return this.options.botToken === null ? 'TELEGRAM_BOT_TOKEN' : null;
  }

  async validateTarget(target: string): Promise<string | null> {
    return isTelegramChatId(target) ? null : 'telegram target: expected a chat id (an integer, negative for groups) or an @channelusername';
  }

  async deliver(notification: OutgoingNotification, target: DeliveryTarget): Promise<DeliveryResult> {
    const token = this.options.botToken;
    if (token === null) return { ok: false, retryable: true, error: 'Telegram is not configured (TELEGRAM_BOT_TOKEN)' };
    const body = JSON.stringify({ chat_id: target.target, text: telegramText(notification), parse_mode: 'HTML', disable_web_page_preview: true });
    const signal = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let answer: BotApiAnswer;
    try {
      const response = await fetch(`${this.options.apiUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal, redirect: 'error' });
      status = response.status;
      const parsed: unknown = await response.json().catch(() => null);
      answer = typeof parsed === 'object' && parsed !== null ? (parsed as BotApiAnswer) : {};
    } catch (error) {
      if (signal.aborted) return { ok: false, retryable: true, error: `Telegram did not answer within ${this.timeoutMs} ms` };
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String((error as Error).message ?? error);
      return { ok: false, retryable: true, error: `Telegram unreachable (${cause})`.split(token).join('***') };
    }
    return judgeTelegramAnswer(status, answer, token);
  }
}

/** Classifies a Bot API answer (`token` only to scrub it from anything echoed back). */
export function judgeTelegramAnswer(status: number, answer: BotApiAnswer, token: string): DeliveryResult {
  if (status >= 200 && status <= 299 && answer.ok === true) return { ok: true };
  const code = answer.error_code ?? status;
  const description = (typeof answer.description === 'string' ? answer.description : `HTTP ${status}`).slice(0, 200).split(token).join('***');
  const error = `Telegram ${code}: ${description}`;
  if (code === 429) {
    const seconds = answer.parameters?.retry_after;
    return { ok: false, retryable: true, error, ...(typeof seconds === 'number' && seconds >= 0 ? { retryAfterMs: Math.min(seconds, 86_400) * 1000 } : {}) };
  }
  if (code === 403) return { ok: false, retryable: false, gone: true, error };
  if (code === 400) {
    const migrated = answer.parameters?.migrate_to_chat_id;
    return { ok: false, retryable: false, error: migrated === undefined ? error : `${error} (the group is now chat ${migrated}; subscribe that id)` };
  }
  if (code >= 400 && code <= 499 && code !== 401 && code !== 408) return { ok: false, retryable: false, error };
  return { ok: false, retryable: true, error };
}
