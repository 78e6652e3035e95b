/**
 * The testing kit as a test author uses it: `startBatchbook()` gives a whole node on free ports with its own
 * temporary data, described exactly as `GET /devnet` describes it; several run side by side in one process; `stop()`
 * leaves no process, port or file behind; and a holder that is `kill -9`ed takes its node and anvil with it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startBatchbook, type Batchbook } from '../src/index.js';
import { waitFor } from './fixtures/wait-for.js';

const root = new URL('..', import.meta.url).pathname;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('startBatchbook', () => {
  before(async () => {
    // @ts-expect-error plain JavaScript build scripts without type declarations
    const { distIsCurrent } = await import('../scripts/build-fingerprint.mjs');
    // @ts-expect-error plain JavaScript build scripts without type declarations
    if (!distIsCurrent()) await (await import('../scripts/build.mjs')).build({ compiler: 'esbuild' });
  });

  let a: Batchbook;
  let b: Batchbook;
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  // two instances may take up to their 600 s start timeout on a loaded machine: the test's limit is above it
  it('runs two instances in one process, each described as GET /devnet describes it', { timeout: 660_000 }, async () => {
    [a, b] = await Promise.all([startBatchbook({ deterministic: true, startTimeoutMs: 600_000 }), startBatchbook({ deterministic: true, startTimeoutMs: 600_000 })]);
    for (const bb of [a, b]) {
      assert.match(bb.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(bb.orderBookUrl, `${bb.url}/devnet`);
      assert.equal(bb.chainId, 31337);
      assert.equal((await fetch(`${bb.url}/readyz`)).status, 200);
      const devnet = (await (await fetch(`${bb.url}/devnet`)).json()) as Record<string, unknown>;
      assert.deepEqual(bb.contracts, devnet.contracts);
      assert.deepEqual(bb.tokens, devnet.tokens);
      assert.deepEqual(bb.accounts, devnet.accounts);
      assert.equal(bb.rpcUrl, devnet.rpcUrl);
      const chainId = await (await fetch(bb.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) })).json();
      assert.equal((chainId as { result: string }).result, '0x7a69');
      const version = await fetch(`${bb.orderBookUrl}/api/v1/version`);
      assert.equal(version.status, 200);
    }
    assert.notEqual(a.url, b.url);
    assert.notEqual(a.rpcUrl, b.rpcUrl);
    assert.notEqual(a.dataDir, b.dataDir);
  });

  it('stop() ends the node and its anvil, closes their ports and removes the temporary data', async () => {
    const anvilPid = Number(readFileSync(join(a.dataDir, 'devnet-chain', 'anvil.pid'), 'utf8').split(/\s+/)[0]);
    assert.ok(running(a.pid) && running(anvilPid));
    await a.stop();
    assert.equal(running(a.pid), false, 'the node exited');
    assert.equal(running(anvilPid), false, 'anvil exited');
    assert.equal(await accepts(a.url), false, 'the HTTP port is closed');
    assert.equal(await accepts(a.rpcUrl), false, 'the JSON-RPC port is closed');
    assert.equal(existsSync(a.dataDir), false, 'the temporary data dir is gone');
    // the other instance is untouched
    assert.equal((await fetch(`${b.url}/readyz`)).status, 200);
    await a.stop(); // idempotent
  });

  it('a holder killed with SIGKILL takes its node and anvil with it', { timeout: 360_000 }, async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/batchbook-holder.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    holder.stdout!.on('data', (d) => (out += d));
    const started = await waitFor('the holder to report its instance', () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as { pid: number; anvilPid: number; url: string; rpcUrl: string; dataDir: string }) : null), 300_000);
    assert.ok(running(started.pid) && running(started.anvilPid));
    holder.kill('SIGKILL');
    await waitFor('the node to exit', () => !running(started.pid), 60_000);
    await waitFor('anvil to exit', () => !running(started.anvilPid), 60_000);
    assert.equal(await accepts(started.url), false);
    assert.equal(await accepts(started.rpcUrl), false);
    await waitFor('the temporary data dir to be removed', () => !existsSync(started.dataDir), 30_000);
  });
});
