import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSE_HEADERS, SseConnection, sseFrame, type SseCloseReason } from './sse-connection.js';
import { openSse, type SseClient } from './test-sse-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real HTTP server whose every request becomes an SseConnection the test drives. */
let server: Server;
let base: string;
const connections: Array<{ conn: SseConnection; res: ServerResponse; closed: SseCloseReason[] }> = [];
let stallTimeoutMs = 60_000;

before(async () => {
  server = createServer((_req, res) => {
    const closed: SseCloseReason[] = [];
    const conn = new SseConnection(res, { stallTimeoutMs, onClose: (r) => closed.push(r) });
    conn.open();
    connections.push({ conn, res, closed });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const c of connections) c.conn.end();
  await new Promise((r) => server.close(r));
});

async function connect(): Promise<{ client: SseClient; server: (typeof connections)[number] }> {
  const before = connections.length;
  const client = await openSse(base);
  while (connections.length === before) await sleep(5);
  return { client, server: connections[connections.length - 1] };
}

/**
 * Writes big messages to a paused client until its socket stops taking them for good: the kernel's buffers
 * (auto-tuned, several MB on loopback) first absorb a lot, so a first `write() === false` may drain again.
 */
async function fillUntilBlocked(conn: SseConnection, payload: string, settleMs = 300): Promise<number> {
  let n = 0;
  let blockedSince: number | null = null;
  for (;;) {
    if (!conn.blocked) {
      blockedSince = null;
      conn.send('message', () => payload);
      if (++n > 10_000) throw new Error('never blocked');
      continue;
    }
    blockedSince ??= Date.now();
    if (Date.now() - blockedSince >= settleMs) return n;
    await sleep(2);
  }
}

describe('SseConnection over a real socket', () => {
  it('sends the spec headers and well-formed frames', async () => {
    const { client, server: s } = await connect();
    assert.equal(client.status, 200);
    for (const [name, value] of Object.entries(SSE_HEADERS)) assert.equal(client.headers[name.toLowerCase()], value, name);
    s.conn.send('message', () => '[1,2]');
    s.conn.ping('{"timestamp":"x"}');
    assert.deepEqual(
      [await client.next(), await client.next()].map((e) => [e.event, e.data]),
      [
        ['message', '[1,2]'],
        ['ping', '{"timestamp":"x"}'],
      ],
    );
    assert.equal(sseFrame('a', 'b'), 'event: a\ndata: b\n\n');
    client.close();
    await client.closed;
    await sleep(50);
    assert.deepEqual(s.closed, ['client'], 'a client disconnect is reported once');
  });

  it('a client that stops reading gets its messages coalesced (latest state only), pings skipped, and never blocks another client', async () => {
    const slow = await connect();
    const fast = await connect();
    slow.client.pause();
    const big = JSON.stringify('x'.repeat(64 * 1024));
    const sentBeforeBlocked = await fillUntilBlocked(slow.server.conn, big);
    assert.ok(slow.server.conn.blocked);

    // meanwhile: many more messages for the slow one, and the fast one is served at once
    let built = 0;
    for (let i = 0; i < 100; i++) {
      slow.server.conn.send('message', () => {
        built++;
        return JSON.stringify({ version: i });
      });
      slow.server.conn.ping();
      fast.server.conn.send('message', () => JSON.stringify({ fast: i }));
    }
    await fast.client.next((e) => e.data === '{"fast":99}');
    assert.equal(
      slow.client.events.filter((e) => e.data.startsWith('{"version"')).length, 0,
      'the fast client got all its messages while the blocked one has not had its first: it is not held up',
    );
    assert.equal(built, 0, 'nothing is built for a blocked connection');
    assert.equal(slow.server.conn.stats.coalesced, 99);
    assert.equal(slow.server.conn.stats.pingsSkipped, 100);
    const written = slow.server.conn.stats.written;
    assert.ok(slow.server.res.writableLength < 1024 * 1024, `server-side buffer stays bounded (${slow.server.res.writableLength} bytes)`);

    // the client reads again: it receives the backlog already in flight, then ONE message with the latest state
    slow.client.resume();
    await slow.client.next((e) => e.data === '{"version":99}', 10_000);
    assert.equal(built, 1, 'built once, on drain, from the latest state');
    assert.equal(slow.server.conn.stats.written, written + 1);
    const versions = slow.client.events.filter((e) => e.data.startsWith('{"version"'));
    assert.deepEqual(versions.map((e) => e.data), ['{"version":99}']);
    assert.equal(slow.client.events.filter((e) => e.event === 'message').length, sentBeforeBlocked + 1);
    slow.client.close();
    fast.client.close();
  });

  it('a client that stays blocked past the stall timeout is disconnected', async () => {
    stallTimeoutMs = 300;
    const stuck = await connect();
    stallTimeoutMs = 60_000;
    stuck.client.pause();
    const blockedAt = Date.now();
    await fillUntilBlocked(stuck.server.conn, JSON.stringify('y'.repeat(64 * 1024)), 100);
    while (stuck.server.closed.length === 0) {
      if (Date.now() - blockedAt > 5_000) assert.fail('not disconnected');
      await sleep(20);
    }
    assert.deepEqual(stuck.server.closed, ['stalled']);
    assert.ok(stuck.server.res.destroyed);
    stuck.client.close();
  });

  it('end() closes a healthy stream gracefully (the client sees the end) and is reported as shutdown', async () => {
    const c = await connect();
    c.server.conn.send('message', () => '[]');
    await c.client.next();
    c.server.conn.end();
    await c.client.closed;
    assert.deepEqual(c.server.closed, ['shutdown']);
    c.server.conn.send('message', () => assert.fail('not built after the end'));
  });
});
