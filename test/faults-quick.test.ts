/**
 * The quick fault tests (the heavy ones run with `npm run faults`, test/faults/): real processes, real servers.
 *
 * An anvil that outlived its node (`kill -9` of the node) is stopped by the next start instead of blocking the
 * devnet port; a pid file naming some other program never gets that program killed.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answersChainId, findFreePort, startAnvil } from '../src/chain/devnet/anvil-process.js';
import { waitFor } from './fixtures/wait-for.js';
import { DevnetInUseError, readPids } from '../src/chain/devnet/orphaned-anvil.js';

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
    assert.equal(readPids(pidFile)?.anvil, orphanPid);
    assert.equal(readPids(pidFile)?.owner, holder.pid, 'the file names the node that started anvil');
    const died = new Promise((r) => holder.once('exit', r));
    holder.kill('SIGKILL');
    await died;
    assert.ok(alive(orphanPid), 'anvil outlived its parent');
    assert.ok(await answersChainId(`http://127.0.0.1:${port}`));

    const anvil = await startAnvil({ port, pidFile });
    try {
      assert.ok(!alive(orphanPid), 'the orphan was stopped');
      assert.notEqual(anvil.pid, orphanPid);
      assert.equal(readPids(pidFile)?.anvil, anvil.pid, 'the new anvil is recorded');
    } finally {
      await anvil.stop();
    }
    assert.ok(!existsSync(pidFile), 'a clean stop removes the pid file');
  });

  it("a second start on the data dir of a running node refuses, and leaves that node's anvil alone", async () => {
    const port = await findFreePort();
    const pidFile = join(dir, 'owned.pid');
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/anvil-holder.ts', String(port), pidFile], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      holder.stdout!.on('data', (d) => (out += d));
      const ownedPid = await waitFor('the holder to start anvil', () => Number(/ready (\d+)/.exec(out)?.[1] ?? 0) || null, 60_000);
      await assert.rejects(startAnvil({ port: await findFreePort(), pidFile }), (err: unknown) => err instanceof DevnetInUseError && err.ownerPid === holder.pid && /stop that node first/.test(err.message));
      assert.ok(alive(ownedPid), 'the running node keeps its anvil');
      assert.equal(readPids(pidFile)?.anvil, ownedPid, 'and its pid file');
    } finally {
      const died = new Promise((r) => holder.once('exit', r));
      holder.kill('SIGTERM');
      await died;
      // the holder's anvil is an orphan now: the next start stops it
      const anvil = await startAnvil({ port, pidFile });
      await anvil.stop();
    }
  });

  it('a pid file naming another program leaves that program alone', async () => {
    const pidFile = join(dir, 'other.pid');
    writeFileSync(pidFile, `${process.pid}\n`);
    const anvil = await startAnvil({ port: await findFreePort(), pidFile });
    await anvil.stop();
    assert.ok(alive(process.pid));
  });
});
