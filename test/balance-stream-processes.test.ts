/**
 * Issue 7 §4 scale-out, with real processes: two balance-stream replicas, each in its own Node process with
 * its own chain client and Redis connections, watch the same (user, token) pair on the real devnet through
 * real Redis. Each block's pairs are read once across both processes, and both see the change.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { startDevnet, findFreePort, type Devnet } from '../src/chain/devnet/index.js';
import { deleteNamespace, ensureLocalRedis, uniqueNamespace } from '../src/infra/test-redis.js';
import { skipUnless } from './fixtures/required-services.js';

const root = new URL('..', import.meta.url).pathname;

interface Child {
  proc: ChildProcess;
  lines: any[];
}

function spawnReplica(args: string[]): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/balance-replica.ts', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: any[] = [];
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        lines.push(msg);
        if (msg.ready) resolve({ proc, lines });
      } catch {
        /* not ours */
      }
    });
    proc.once('exit', (code) => reject(new Error(`replica exited with ${code}`)));
  });
}

describe('balance stream: two processes on real Redis', { skip: await skipUnless('redis') }, () => {
  let devnet: Devnet;
  let redisUrl: string;
  const namespace = uniqueNamespace('procs');
  const children: Child[] = [];

  before(async () => {
    redisUrl = await ensureLocalRedis();
    devnet = await startDevnet({ dataDir: null, port: await findFreePort(), blockTime: 1, activity: false, historyHours: 0 });
  });
  after(async () => {
    for (const c of children) c.proc.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.proc.exitCode !== null ? r(null) : c.proc.once('exit', r)))));
    await devnet?.stop();
    if (redisUrl) await deleteNamespace(redisUrl, namespace);
  });

  it('reads each block once across both processes, and both processes’ watchers get the change', async () => {
    const user = privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address;
    const token = devnet.deployment.tokens.find((t) => t.symbol === 'DAI')!.address.toLowerCase();
    const relayer = devnet.deployment.contracts.vaultRelayer;
    for (const id of ['p1', 'p2']) children.push(await spawnReplica([devnet.rpcUrl, redisUrl, namespace, id, relayer, user, token]));
    assert.ok(children.every((c) => c.lines.find((l) => l.ready)?.backend === 'redis'), 'both replicas use Redis');

    // let both settle into the shared rhythm, then count the per-block reads of a window of blocks
    await new Promise((r) => setTimeout(r, 3000));
    const marks = children.map((c) => c.lines.length);
    await new Promise((r) => setTimeout(r, 6000));
    const blockReads = children.flatMap((c, i) => c.lines.slice(marks[i]).filter((l) => l.read?.kind === 'block').map((l) => l.read.block as string));
    const perBlock = new Map<string, number>();
    for (const b of blockReads) perBlock.set(b, (perBlock.get(b) ?? 0) + 1);
    assert.ok(perBlock.size >= 3, `blocks read in the window: ${perBlock.size}`);
    const doubled = [...perBlock.values()].filter((n) => n > 1).length;
    assert.ok(doubled <= 1, `a block was read by both processes ${doubled} times: ${JSON.stringify([...perBlock])}`);

    const minted = await devnet.faucet({ address: user, token: 'DAI', amount: '12' });
    await minted.waitForReceipt();
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !children.every((c) => c.lines.some((l) => l.change === minted.amount.toString()))) await new Promise((r) => setTimeout(r, 100));
    for (const c of children) assert.ok(c.lines.some((l) => l.change === minted.amount.toString()), 'both processes saw the new balance');
  });
});
