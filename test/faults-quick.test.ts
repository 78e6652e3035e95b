/**
 * The quick fault tests (the heavy ones run with `npm run faults`, test/faults/): real processes, real servers.
 *
 * - an anvil that outlived its node (`kill -9` of the node) is stopped by the next start instead of blocking the
 *   devnet port; a pid file naming some other program never gets that program killed;
 * - PostgreSQL stopped: requests that need it answer 503 in their API's envelope, /readyz 503, and the node serves
 *   again once PostgreSQL is back, without a restart (a private PostgreSQL: the shared one is never stopped).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersChainId, findFreePort, startAnvil } from '../src/chain/devnet/anvil-process.js';
import { canRunPrivate, startPrivatePostgres, type PrivatePostgres } from './fixtures/private-services.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { waitFor } from './fixtures/wait-for.js';

const root = new URL('..', import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('an anvil orphaned by kill -9 of its node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bb-orphan-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is stopped by the next start, which then gets the port', async () => {
    const port = await findFreePort();
    const pidFile = join(dir, 'anvil.pid');
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/anvil-holder.ts', String(port), pidFile], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    holder.stdout!.on('data', (d) => (out += d));
    const orphanPid = await waitFor('the holder to start anvil', () => Number(/ready (\d+)/.exec(out)?.[1] ?? 0) || null, 60_000);
    assert.equal(Number(readFileSync(pidFile, 'utf8')), orphanPid);
    const died = new Promise((r) => holder.once('exit', r));
    holder.kill('SIGKILL');
    await died;
    assert.ok(alive(orphanPid), 'anvil outlived its parent');
    assert.ok(await answersChainId(`http://127.0.0.1:${port}`));

    const anvil = await startAnvil({ port, pidFile });
    try {
      assert.ok(!alive(orphanPid), 'the orphan was stopped');
      assert.notEqual(anvil.pid, orphanPid);
      assert.equal(Number(readFileSync(pidFile, 'utf8')), anvil.pid, 'the new anvil is recorded');
    } finally {
      await anvil.stop();
    }
    assert.ok(!existsSync(pidFile), 'a clean stop removes the pid file');
  });

  it('a pid file naming another program leaves that program alone', async () => {
    const pidFile = join(dir, 'other.pid');
    writeFileSync(pidFile, `${process.pid}\n`);
    const anvil = await startAnvil({ port: await findFreePort(), pidFile });
    await anvil.stop();
    assert.ok(alive(process.pid));
  });
});

describe('PostgreSQL stopped under a running node', { skip: canRunPrivate('postgres') ? false : 'no initdb/pg_ctl on this machine' }, () => {
  let pgServer: PrivatePostgres;
  let app: TestApp;
  before(async () => {
    pgServer = await startPrivatePostgres();
    app = await startTestApp({ DATABASE_URL: pgServer.url });
  });
  after(async () => {
    await app?.stop();
    await pgServer?.destroy();
  });

  const missingUid = `0x${'ab'.repeat(56)}`;

  it('answers 503 in each API\'s envelope, /readyz 503, and serves again when it returns', async () => {
    assert.equal((await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`)).status, 404);
    await pgServer.stop();

    const order = await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`);
    assert.equal(order.status, 503, JSON.stringify(order.body));
    assert.equal(order.body.errorType, 'ServiceUnavailable');
    assert.equal(typeof order.body.description, 'string');
    const put = await call(app.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: '{"during":"outage"}' });
    assert.equal(put.status, 503, JSON.stringify(put.body));
    assert.deepEqual(Object.keys(put.body).sort(), ['description', 'errorType']);
    const aux = await call(app.baseUrl, 'GET', `/accounts/0x${'12'.repeat(20)}/notifications`);
    assert.equal(aux.status, 503, JSON.stringify(aux.body));
    assert.deepEqual(Object.keys(aux.body), ['message']);
    const ready = await call(app.baseUrl, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.checks.database, false);
    assert.equal((await call(app.baseUrl, 'GET', '/healthz')).status, 200, 'alive, only not ready');

    await pgServer.start();
    await waitFor('the order book to answer from the database again', async () => (await call(app.baseUrl, 'GET', `/api/v1/orders/${missingUid}`)).status === 404, 60_000, 100);
    assert.equal((await call(app.baseUrl, 'GET', '/readyz')).status, 200);
    assert.equal((await call(app.baseUrl, 'PUT', '/api/v1/app_data', { fullAppData: '{"after":"outage"}' })).status, 201);
  });
});
