/**
 * The Telegram channel against a local fake of the Bot API: a real HTTP server that speaks `sendMessage` as the
 * Bot API documents it (`/bot<token>/sendMessage`, `{ok, result}` or `{ok: false, error_code, description,
 * parameters}`), and answers 401 for any other token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { DeliveryResult, DeliveryTarget } from './channel.js';
import { SAMPLE_NOTIFICATION } from '../../../test/fixtures/sample-notification.js';
import { escapeTelegramHtml, TelegramChannel, telegramText } from './telegram-channel.js';
import { startProviderServer, type ProviderReply, type ProviderServer, type RecordedRequest } from '../../providers/test-provider-server.js';

const TOKEN = '123456789:AAE-secret-token-abcdefghijklmnop';
const CHAT = '987654321';

const notification = SAMPLE_NOTIFICATION;
const target = (chat = CHAT): DeliveryTarget => ({ subscriptionId: 's1', channel: 'telegram', target: chat, secret: null });

/** What the fake answers for a valid token: `sent` for a known chat, or a scripted failure. */
type Script = 'sent' | { status: number; body: unknown } | 'hang';

describe('telegram channel', () => {
  let api: ProviderServer;
  let script: Script = 'sent';
  const sent: Array<Record<string, unknown>> = [];

  const botApi = (request: RecordedRequest): ProviderReply => {
    if (request.path !== `/bot${TOKEN}/sendMessage`) return { status: 401, body: { ok: false, error_code: 401, description: 'Unauthorized' } };
    if (request.headers['content-type'] !== 'application/json') return { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: message text is empty' } };
    if (script === 'hang') return 'hang';
    if (script !== 'sent') return script;
    const params = JSON.parse(request.body) as Record<string, unknown>;
    if (params.chat_id !== CHAT) return { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } };
    sent.push(params);
    return { status: 200, body: { ok: true, result: { message_id: sent.length, chat: { id: Number(CHAT), type: 'private' }, date: 1764075600, text: 'rendered' } } };
  };

  before(async () => {
    api = await startProviderServer(botApi);
  });
  after(async () => {
    await api.close();
  });

  const channel = (token: string | null = TOKEN, timeoutMs?: number) => new TelegramChannel({ botToken: token, apiUrl: api.url, timeoutMs });
  const assertNoToken = (result: DeliveryResult) => assert.ok(!JSON.stringify(result).includes('secret-token'), JSON.stringify(result));

  it('sends an HTML message without link preview to the chat', async () => {
    script = 'sent';
    assert.deepEqual(await channel().deliver(notification, target()), { ok: true });
    assert.deepEqual(sent.at(-1), {
      chat_id: CHAT,
      text: '<b>Order filled</b>\nSold 0.1 WETH for 299.12 USDC on devnet\n\nOrder <code>0xabc</code>',
      parse_mode: 'HTML',
      disable_web_page_preview: true,
    });
  });

  it('escapes every piece of notification text, so only its own tags remain', () => {
    const hostile = { ...notification, type: 'x<i>', message: 'a <a href="https://evil.example">click</a> & <script>b</script>', metadata: { orderId: '<b>' } };
    const text = telegramText(hostile);
    assert.equal(text, '<b>x&lt;i&gt;</b>\na &lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt; &amp; &lt;script&gt;b&lt;/script&gt;\n\nOrder <code>&lt;b&gt;</code>');
    assert.deepEqual(text.match(/<\/?[a-z]+>/g), ['<b>', '</b>', '<code>', '</code>']);
    assert.equal(escapeTelegramHtml('1 < 2 && 3 > 2'), '1 &lt; 2 &amp;&amp; 3 &gt; 2');
  });

  it('keeps a long message within Telegram\'s 4096 characters without cutting an entity', () => {
    const text = telegramText({ ...notification, message: '&'.repeat(5000) });
    assert.ok(text.length <= 4096, String(text.length));
    assert.match(text, /(&amp;)+…\n\nOrder <code>0xabc<\/code>$/);
  });

  it('a chat that does not exist is final (400 chat not found)', async () => {
    script = 'sent';
    assert.deepEqual(await channel().deliver(notification, target('111')), { ok: false, retryable: false, error: 'Telegram 400: Bad Request: chat not found' });
  });

  it('a bot blocked by the user is final and gone (403)', async () => {
    script = { status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } };
    assert.deepEqual(await channel().deliver(notification, target()), { ok: false, retryable: false, gone: true, error: 'Telegram 403: Forbidden: bot was blocked by the user' });
  });

  it('flood control (429) is retryable after parameters.retry_after', async () => {
    script = { status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 17', parameters: { retry_after: 17 } } };
    assert.deepEqual(await channel().deliver(notification, target()), { ok: false, retryable: true, retryAfterMs: 17_000, error: 'Telegram 429: Too Many Requests: retry after 17' });
  });

  it('a server error, even one that is not JSON, is retryable', async () => {
    script = { status: 502, body: undefined };
    assert.deepEqual(await channel().deliver(notification, target()), { ok: false, retryable: true, error: 'Telegram 502: HTTP 502' });
  });

  it('a wrong token is retryable (the operator can fix it) and never shows the token', async () => {
    const result = await channel('999:AAE-secret-token-wrongwrongwrongwrong').deliver(notification, target());
    assert.deepEqual(result, { ok: false, retryable: true, error: 'Telegram 401: Unauthorized' });
    assertNoToken(result);
  });

  it('timeouts and an unreachable API are retryable, without the token in the error', async () => {
    script = 'hang';
    const slow = await channel(TOKEN, 300).deliver(notification, target());
    assert.deepEqual(slow, { ok: false, retryable: true, error: 'Telegram did not answer within 300 ms' });
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as { port: number }).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const down = await new TelegramChannel({ botToken: TOKEN, apiUrl: `http://127.0.0.1:${port}` }).deliver(notification, target());
    assert.equal(down.ok, false);
    assert.equal(!down.ok && down.retryable, true);
    assert.match(!down.ok ? down.error : '', /^Telegram unreachable \(.*ECONNREFUSED.*\)$/);
    assertNoToken(down);
  });

  it('names TELEGRAM_BOT_TOKEN when unconfigured, and validates chat ids', async () => {
    assert.equal(channel(null).missingConfiguration(), 'TELEGRAM_BOT_TOKEN');
    assert.equal(channel().missingConfiguration(), null);
    for (const ok of ['987654321', '-1001234567890', '@batchbook_alerts']) assert.equal(await channel().validateTarget(ok), null, ok);
    for (const bad of ['', 'abc', '12.5', '@ab', 'https://t.me/x', '1'.repeat(30)]) assert.match((await channel().validateTarget(bad)) ?? 'accepted', /^telegram target: expected a chat id/, bad);
  });
});
