/**
 * The email channel against a real SMTP server (`smtp-server`) started in the test: it authenticates the sender,
 * receives the message, and can reject recipients permanently (550) or transiently (452).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { DeliveryTarget } from './channel.js';
import { SAMPLE_NOTIFICATION } from '../../../test/fixtures/sample-notification.js';
import { EmailChannel, emailContent, isEmailAddress } from './email-channel.js';

const notification = SAMPLE_NOTIFICATION;

interface Received {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

describe('email channel', () => {
  let smtp: SMTPServer;
  let port: number;
  const inbox: Received[] = [];
  /** final replies held back (a server that received the message and never confirms it) */
  const held: Array<() => void> = [];

  before(async () => {
    smtp = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === 'bb' && auth.password === 'p@ss w0rd') return callback(null, { user: auth.username });
        return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      },
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('nobody@')) return callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
        if (address.address.startsWith('full@')) return callback(Object.assign(new Error('Mailbox full, try later'), { responseCode: 452 }));
        return callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          if (session.envelope.rcptTo.some((r) => r.address.startsWith('slow@'))) held.push(() => callback());
          else callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    port = (smtp.server.address() as { port: number }).port;
  });
  after(async () => {
    for (const release of held) release();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  const smtpUrl = (password = 'p@ss w0rd') => `smtp://bb:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const target = (address: string): DeliveryTarget => ({ subscriptionId: 'sub-7', channel: 'email', target: address, secret: null });
  const channel = (password?: string) => new EmailChannel({ smtpUrl: smtpUrl(password), from: 'batchbook <alerts@batchbook.example>', timeoutMs: 5000 });

  it('sends the notification as a mail the server receives, authenticated, with subject and body', async () => {
    const before = inbox.length;
    assert.deepEqual(await channel().deliver(notification, target('trader@example.com')), { ok: true });
    assert.equal(inbox.length, before + 1);
    const mail = inbox.at(-1)!;
    assert.equal(mail.user, 'bb');
    assert.equal(mail.from, 'alerts@batchbook.example');
    assert.deepEqual(mail.to, ['trader@example.com']);
    const [head, ...body] = mail.raw.split('\r\n\r\n');
    assert.match(head!, /^Subject: Order filled: Sold 0\.1 WETH for 299\.12 USDC on devnet$/m);
    assert.match(head!, /^From: batchbook <alerts@batchbook\.example>$/m);
    assert.match(head!, /^To: trader@example\.com$/m);
    assert.match(head!, /^Message-ID: <order_filled-0xabc-0x123-4\.sub-7@batchbook\.notifications>$/m);
    assert.match(head!, /^X-Batchbook-Notification-Id: order_filled-0xabc-0x123-4$/im);
    assert.equal(body.join('\r\n\r\n').replace(/\r\n/g, '\n'), emailContent(notification, 'sub-7').text);
    assert.match(body.join('\n'), /Sold 0\.1 WETH for 299\.12 USDC on devnet/);
  });

  it('a permanent rejection (550) is final, a transient one (452) retryable', async () => {
    const permanent = await channel().deliver(notification, target('nobody@example.com'));
    assert.equal(permanent.ok, false);
    assert.equal(!permanent.ok && permanent.retryable, false);
    assert.match(!permanent.ok ? permanent.error : '', /^SMTP 550: .*No such mailbox/);
    const transient = await channel().deliver(notification, target('full@example.com'));
    assert.equal(!transient.ok && transient.retryable, true);
    assert.match(!transient.ok ? transient.error : '', /^SMTP 452: .*Mailbox full/);
  });

  it('a wrong password is retryable (the operator can fix it) and the password never shows', async () => {
    const result = await channel('wrong-secret').deliver(notification, target('trader@example.com'));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, true);
    assert.match(!result.ok ? result.error : '', /^SMTP 535: .*Invalid username or password/);
    assert.ok(!JSON.stringify(result).includes('wrong-secret'));
  });

  it('an SMTP server that is down is retryable', async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const freePort = (free.address() as { port: number }).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const result = await new EmailChannel({ smtpUrl: `smtp://127.0.0.1:${freePort}`, from: 'a@batchbook.example' }).deliver(notification, target('trader@example.com'));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.retryable, true);
    assert.match(!result.ok ? result.error : '', /ECONNECTION|ECONNREFUSED/);
  });

  it('a server that received the message and never confirms it: not retried (the mail is never sent twice); a server that never greets: retryable', async () => {
    const before = inbox.length;
    const quick = new EmailChannel({ smtpUrl: smtpUrl(), from: 'batchbook <alerts@batchbook.example>', timeoutMs: 700 });
    const unconfirmed = await quick.deliver(notification, target('slow@example.com'));
    assert.equal(inbox.length, before + 1, 'the server has the message');
    assert.equal(unconfirmed.ok, false);
    assert.equal(!unconfirmed.ok && unconfirmed.retryable, false, 'a retry would send it a second time');
    assert.match(!unconfirmed.ok ? unconfirmed.error : '', /after the message was sent; not retried, so it is never delivered twice$/);

    const sockets: Array<import('node:net').Socket> = [];
    const silent = createServer((socket) => void sockets.push(socket.on('error', () => undefined))); // accepts, never says 220
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port_ = (silent.address() as { port: number }).port;
      const result = await new EmailChannel({ smtpUrl: `smtp://127.0.0.1:${port_}`, from: 'a@batchbook.example', timeoutMs: 700 }).deliver(notification, target('trader@example.com'));
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.retryable, true, 'nothing was sent: safe to retry');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('names SMTP_URL, then SMTP_FROM, when unconfigured', () => {
    assert.equal(new EmailChannel({ smtpUrl: null, from: null }).missingConfiguration(), 'SMTP_URL');
    assert.equal(new EmailChannel({ smtpUrl: smtpUrl(), from: null }).missingConfiguration(), 'SMTP_FROM');
    assert.equal(channel().missingConfiguration(), null);
  });

  it('accepts one plain address and refuses lists, display names and header injection', async () => {
    for (const ok of ['trader@example.com', 'first.last+tag@mail.example.co.uk', "o'brien@example.org"]) assert.equal(await channel().validateTarget(ok), null, ok);
    for (const bad of ['', 'trader', 'trader@', '@example.com', 'trader@localhost', 'a@b@example.com', 'a@example.com, b@example.com', 'Trader <t@example.com>', 'a@example.com\r\nBcc: x@example.com', 'a..b@example.com', '.a@example.com', 'a@-example.com', 'a@example.123', `${'a'.repeat(65)}@example.com`]) {
      assert.equal(isEmailAddress(bad), false, JSON.stringify(bad));
      assert.match((await channel().validateTarget(bad)) ?? 'accepted', /^email target: expected one email address/);
    }
  });
});
