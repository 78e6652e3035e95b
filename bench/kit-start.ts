/**
 * Start-up of a fresh node (issue 22 §7, issue 24 §3), each as a ratio to the least a node start can take on this
 * machine in the same run (a node process loading the compiled app and exiting):
 * - `startBatchbook({deterministic: true})` → resolved, alone and four at once (their wall time), from the
 *   prepared templates;
 * - `npm start` on a fresh DATA_DIR (the compiled node, 24 h of history from the prepared template) → /readyz 200.
 * The templates are made first (`batchbook prepare`), outside the figures. On a shared machine the wall times follow
 * the load; each start's CPU time (the node process's user + system time until it is ready, anvil not included)
 * does much less, and is given against the CPU time of the baseline's node.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Figure } from './figure.js';
import { startBatchbook } from '../src/index.js';
import { findFreePort } from '../src/chain/devnet/index.js';

const root = new URL('..', import.meta.url).pathname;

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** a node process that loads the compiled app and exits: its wall time and its CPU time (ms) */
function moduleLoad(): { wall: number; cpu: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['-e', `import(${JSON.stringify(join(root, 'dist', 'app.js'))}).then(() => { const c = process.cpuUsage(); process.stdout.write(String((c.user + c.system) / 1000)); process.exit(0); })`], { stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.status !== 0) throw new Error('the compiled app did not load');
  return { wall: performance.now() - t, cpu: Number(r.stdout.toString()) };
}

/** user + system CPU time (ms) a running process has used so far (Linux /proc; NaN elsewhere) */
function cpuTimeOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    // after "(comm) ": state is field 3, utime 14 and stime 15 (1-based), in clock ticks of 10 ms
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function npmStartFresh(): Promise<{ wall: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bb-bench-start-'));
  const port = await findFreePort();
  const t = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dir, PORT: String(port), DEVNET_PORT: '0', LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
      if (ok) return { wall: performance.now() - t, cpu: cpuTimeOf(child.pid!) };
      if (child.exitCode !== null) throw new Error('npm start exited');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchKitStart(): Promise<Figure[]> {
  // @ts-expect-error plain JavaScript build scripts without type declarations
  const { distIsCurrent } = await import('../scripts/build-fingerprint.mjs');
  // @ts-expect-error plain JavaScript build scripts without type declarations
  if (!distIsCurrent()) await (await import('../scripts/build.mjs')).build({ compiler: 'esbuild' });
  spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'prepare'], { stdio: 'inherit' });
  const loads = [moduleLoad(), moduleLoad()];
  const baseline = Math.min(...loads.map((l) => l.wall));
  const baselineCpu = Math.min(...loads.map((l) => l.cpu));

  let t = performance.now();
  const one = await startBatchbook({ deterministic: true, startTimeoutMs: 600_000 });
  const alone = performance.now() - t;
  const aloneCpu = cpuTimeOf(one.pid);
  await one.stop();

  t = performance.now();
  const four = await Promise.all([1, 2, 3, 4].map(() => startBatchbook({ deterministic: true, startTimeoutMs: 600_000 })));
  const together = performance.now() - t;
  await Promise.all(four.map((bb) => bb.stop()));

  const npmStart = await npmStartFresh();
  const figure = (name: string, ms: number, note: string): Figure => ({ name, value: seconds(ms), unit: 's', baseline: seconds(baseline), baselineUnit: 's (node loading the app)', ratio: ms / baseline, note });
  const cpuFigure = (name: string, ms: number, note: string): Figure => ({ name, value: seconds(ms), unit: 's CPU', baseline: seconds(baselineCpu), baselineUnit: 's CPU (node loading the app)', ratio: ms / baselineCpu, note });
  return [
    figure('kit: startBatchbook() → resolved, alone', alone, 'deterministic, from the prepared templates; goal ≤ 3 s'),
    cpuFigure('kit: startBatchbook() alone, the node\'s CPU time until ready', aloneCpu, 'user + system, anvil not included'),
    figure('kit: four startBatchbook() at once → all resolved', together, 'wall time'),
    figure('npm start, fresh DATA_DIR → /readyz 200', npmStart.wall, '24 h of history from the prepared template; goal ≤ 5 s busy'),
    cpuFigure('npm start, fresh DATA_DIR: the node\'s CPU time until ready', npmStart.cpu, 'user + system, anvil not included'),
  ];
}
