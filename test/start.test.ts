/**
 * `npm start` as a user runs it: the real entry point in a child process with no configuration but a data
 * dir and ports. It prints where everything is, serves, stops cleanly on SIGTERM, and a restart with the same
 * DATA_DIR resumes the same chain and the same data. A bad variable stops it with one line.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../src/chain/devnet/index.js';
import { skipUnless } from './fixtures/required-services.js';
const pgrepSkip = await skipUnless('pgrep');

const root = new URL('..', import.meta.url).pathname;
/** `npm start`: the launcher that runs the compiled dist/ (built in `before` when stale, as it would itself) */
const ENTRY = ['scripts/start.mjs'];

interface Running {
  child: ChildProcess;
  output: () => string;
  /** stdout alone (JSON lines: it is a pipe, not a terminal) */
  stdout: () => string;
  base: string;
}

async function start(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ENTRY, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (d) => ((out += d), (stdout += d)));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const m = /API docs:\s+(http:\/\/[^\s]+)\/docs/.exec(out);
    if (m) return { child, output: () => out, stdout: () => stdout, base: m[1]!.replace(/"$/, '') };
    if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`did not come up:\n${out}`);
}

async function stop(run: Running): Promise<{ code: number | null }> {
  const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)));
  run.child.kill('SIGTERM');
  const code = await exited;
  return { code };
}

describe('npm start', () => {
  before(async () => {
    // @ts-expect-error plain JavaScript build scripts without type declarations
    const { distIsCurrent } = await import('../scripts/build-fingerprint.mjs');
    // @ts-expect-error plain JavaScript build scripts without type declarations
    if (!distIsCurrent()) await (await import('../scripts/build.mjs')).build({ compiler: 'esbuild' });
  });

  const dataDir = mkdtempSync(join(tmpdir(), 'bb-start-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // two start-ups, each allowed 180 s by start() on a loaded machine
  it('comes up with no configuration, prints where things are, serves, and stops cleanly on SIGTERM; a restart resumes', { timeout: 420_000 }, async () => {
    const env = { DATA_DIR: dataDir, PORT: String(await findFreePort()), DEVNET_PORT: String(await findFreePort()), DEVNET_HISTORY_HOURS: '1', LOG_LEVEL: 'info' };
    const first = await start(env);
    const out = first.output();
    assert.match(out, /order book \(devnet\): http:\/\/127\.0\.0\.1:\d+\/devnet\/api\/v1/);
    assert.match(out, /devnet JSON-RPC:\s+http:\/\/127\.0\.0\.1:\d+/);
    assert.match(out, /health \/ readiness/);
    assert.equal((await fetch(`${first.base}/healthz`)).status, 200);
    assert.equal((await fetch(`${first.base}/readyz`)).status, 200);
    assert.equal((await fetch(`${first.base}/docs/json`)).status, 200);
    // stdout is a pipe: every line is a pino JSON record, the banner included; requests are logged at debug only
    const records = first.stdout().trim().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.ok(records.some((r) => r.level === 30 && /^\s+API docs:/.test(r.msg)), 'the banner is logged as JSON at info');
    assert.ok(!records.some((r) => /incoming request|request completed/.test(r.msg)), 'no per-request lines at info');
    const devnet = (await (await fetch(`${first.base}/devnet`)).json()) as { contracts: { settlement: string } };
    assert.equal(devnet.contracts.settlement.toLowerCase(), '0x9008d19f58aabd9ed0d60971565aa8510560ab41');
    const put = await fetch(`${first.base}/api/v1/app_data`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fullAppData: '{"kept":true}' }) });
    assert.equal(put.status, 201);
    const hash = (await put.json()) as string;
    const rpc = async (base: string) => {
      const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x0', false] }) });
      return ((await res.json()) as { result: { hash: string } }).result.hash;
    };
    const rpcUrl = /devnet JSON-RPC:\s+(http:\/\/[^\s]+)/.exec(out)![1]!;
    const genesis = await rpc(rpcUrl);

    const stopped = await stop(first);
    assert.equal(stopped.code, 0, first.output().slice(-2000));

    const second = await start(env);
    try {
      assert.equal(await rpc(rpcUrl), genesis, 'same chain after restart');
      const got = await fetch(`${second.base}/api/v1/app_data/${hash}`);
      assert.equal(got.status, 200, 'same data after restart');
      assert.match(second.output(), /restored|resum/i);
    } finally {
      assert.equal((await stop(second)).code, 0);
    }
  });

  it('says so and stops when the devnet (anvil) dies, rather than serving a dead chain', { skip: pgrepSkip, timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bb-start-kill-'));
    try {
      const devnetPort = await findFreePort();
      const run = await start({ DATA_DIR: dir, PORT: String(await findFreePort()), DEVNET_PORT: String(devnetPort), DEVNET_HISTORY_HOURS: '0', LOG_LEVEL: 'info' });
      const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)));
      const pids = spawnSync('pgrep', ['-f', `anvil.*--port ${devnetPort}`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
      assert.ok(pids.length >= 1, 'found the anvil process');
      for (const pid of pids) process.kill(Number(pid), 'SIGKILL');
      const code = await exited;
      assert.notEqual(code, 0);
      assert.match(run.output(), /devnet \(anvil\) exited unexpectedly/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad variable stops it with one line naming the variable', () => {
    const r = spawnSync(process.execPath, ENTRY, { cwd: root, env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stderr.trim(), "configuration error: PORT: expected an integer from 0 to 65535, got 'eighty'");
  });
});
