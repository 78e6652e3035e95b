import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestPostgres, type TestPostgres } from '../../test/fixtures/databases.js';
import { skipUnless } from '../../test/fixtures/required-services.js';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { waitFor } from '../../test/fixtures/wait-for.js';
import { startTcpProxy } from '../../test/fixtures/tcp-proxy.js';
import { openDatabase } from './connection.js';
import { leaseIsCurrent, runAsLeader, type LeadershipLease } from './leadership.js';

const quiet = { info: () => {}, warn: () => {} };
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

/** A fresh database on the local server with the schema (leadership epochs included). */
async function migratedPostgres(): Promise<TestPostgres> {
  const server = await createTestPostgres();
  const database = await openDatabase({ kind: 'postgres', url: server.url });
  await database.close();
  return server;
}
const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

describe('leadership across replicas (PostgreSQL advisory lock)', { skip: await skipUnless('postgres') }, () => {
  it('exactly one of two replicas leads; when it stops, the other takes over', async () => {
    const server = await migratedPostgres();
    try {
      const leading = new Set<string>();
      const start = (id: string, outer: AbortController) =>
        runAsLeader({ url: server.url, name: 'test-loops', logger: quiet, signal: outer.signal, retryMs: 100 }, async (signal) => {
          leading.add(id);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          leading.delete(id);
        });
      const a = new AbortController();
      const b = new AbortController();
      const ra = start('a', a);
      assert.ok(await until(() => leading.has('a')));
      // witness that b really tried: each of its attempts is a new session on this test database (a keeps its one)
      const monitor = new pg.Client({ connectionString: server.url });
      await monitor.connect();
      const sessions = async () => Number((await monitor.query<{ n: string }>('select sessions as n from pg_stat_database where datname = current_database()')).rows[0]!.n);
      const base = await sessions();
      const rb = start('b', b);
      try {
        await waitFor('three attempts by b', async () => (await sessions()) >= base + 3, 30_000);
      } finally {
        await monitor.end();
      }
      assert.deepEqual([...leading], ['a'], 'b stands by while a leads');
      a.abort();
      await ra;
      assert.ok(await until(() => leading.has('b')), 'b takes over');
      assert.deepEqual([...leading], ['b']);
      b.abort();
      await rb;
      assert.equal(leading.size, 0);
    } finally {
      await server.drop();
    }
  });

  it('a leader that freezes without closing its connection (SIGSTOP) loses the lock; the standby takes over', async () => {
    const server = await migratedPostgres();
    const root = new URL('../..', import.meta.url).pathname;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/leader-process.ts', server.url, 'test-frozen', '200', '2000'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const standby = new AbortController();
    let standbyLeads = false;
    try {
      await waitFor('the child process to lead', () => out.includes('leading'), 60_000);
      const running = runAsLeader({ url: server.url, name: 'test-frozen', logger: quiet, signal: standby.signal, retryMs: 200, idleTimeoutMs: 2000 }, async (signal) => {
        standbyLeads = true;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      });
      child.kill('SIGSTOP'); // frozen: its socket stays open, nothing is sent
      await waitFor('the standby to take over from the frozen leader', () => standbyLeads, 30_000);
      child.kill('SIGCONT');
      await waitFor('the thawed process to notice it no longer leads', () => out.includes('lost'), 30_000);
      assert.equal(out.match(/leading/g)!.length, 1, 'the thawed process does not lead again while the standby does');
      standby.abort();
      await running;
    } finally {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
      await server.drop();
    }
  });

  it('a leader whose connection silently stops forwarding steps down before the server frees its lock; its old epoch is no longer current', async () => {
    const server = await migratedPostgres();
    const direct = new URL(server.url);
    const proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const viaProxy = new URL(server.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    // the old leader's own pool still reaches the database (only its leadership connection is cut)
    const database = await openDatabase({ kind: 'postgres', url: server.url });
    const events: string[] = [];
    const leases = new Map<string, LeadershipLease>();
    const a = new AbortController();
    const b = new AbortController();
    const contend = (id: string, url: string, outer: AbortController) =>
      runAsLeader({ url, name: 'test-blackhole', logger: quiet, signal: outer.signal, retryMs: 100, idleTimeoutMs: 3_000 }, async (signal, lease) => {
        leases.set(id, lease);
        events.push(`${id} leads`);
        await aborted(signal);
        events.push(`${id} lost`);
        outer.abort(); // this replica stops contending: the test looks at one hand-over
      });
    try {
      const runningA = contend('a', viaProxy.toString(), a);
      await waitFor('a to lead through the proxy', () => events.includes('a leads'), 30_000);
      const runningB = contend('b', server.url, b);
      proxy.blackhole(); // a's pings now go nowhere and nothing comes back: no error, no close
      await waitFor('b to take over once the server ended the silent session', () => events.includes('b leads'), 30_000);
      assert.deepEqual(events, ['a leads', 'a lost', 'b leads'], 'a stepped down (ping deadline) before the server freed the lock (idle timeout)');
      await runningA;
      assert.equal(leases.get('a')!.epoch, 1n);
      assert.equal(leases.get('b')!.epoch, 2n);

      // the fence: what only a leader may do checks, in its own transaction, that its epoch is still current
      const current = (lease: LeadershipLease) => database.db.transaction().execute((trx) => leaseIsCurrent(trx, lease));
      assert.equal(await current(leases.get('a')!), false, 'the superseded leader\'s epoch is refused');
      assert.equal(await current(leases.get('b')!), true);
      assert.equal(await current({ name: 'test-blackhole', epoch: null }), true, 'no epoch (embedded database): nothing to fence');

      b.abort();
      await runningB;
    } finally {
      a.abort();
      b.abort();
      await proxy.close();
      await database.close();
      await server.drop();
    }
  });
});

describe('leadership with the embedded database (no PostgreSQL needed)', () => {
  it('an embedded database always leads', async () => {
    const c = new AbortController();
    let ran = false;
    await runAsLeader({ url: null, name: 'x', logger: quiet, signal: c.signal }, async () => {
      ran = true;
    });
    assert.equal(ran, true);
  });
});
