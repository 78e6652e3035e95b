/**
 * Fork mode (issue 20), against the local chain-1 upstream of the tests (fixtures/mainnet-upstream.ts):
 * - `npm start` with FORK_URL on a fresh DATA_DIR → /readyz 200 (every read through the upstream), and the restart
 *   from that DATA_DIR with the upstream stopped, each as a ratio to the devnet's fresh `npm start` → /readyz 200
 *   measured in the same run;
 * - a 1 WETH → USDC quote on the fork, as a ratio to the same quote on the devnet (median of sequential requests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Figure } from './figure.js';
import { findFreePort } from '../src/chain/devnet/index.js';
import { startMainnetUpstream } from '../test/fixtures/mainnet-upstream.js';

const root = new URL('..', import.meta.url).pathname;
const QUOTES = 40;

interface Node {
  base: string;
  readyMs: number;
  stop(): Promise<void>;
}

async function startNode(dataDir: string, env: Record<string, string>): Promise<Node> {
  const port = await findFreePort();
  const t = performance.now();
  const child: ChildProcess = spawn(process.execPath, [join(root, 'dist', 'main.js')], {
    cwd: dataDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), DEVNET_PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_QUOTE: '0', ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((r) => child.once('exit', r));
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    const ok = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error('the node exited before it was ready');
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyMs = performance.now() - t;
  return {
    base,
    readyMs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Median milliseconds of a 1 WETH → USDC sell quote on `network` of the node. */
async function quoteLatency(node: Node, network: string): Promise<number> {
  const info = (await (await fetch(`${node.base}/devnet`)).json()) as { tokens: Array<{ symbol: string; address: string }>; accounts: Array<{ address: string }> };
  const token = (symbol: string) => info.tokens.find((t) => t.symbol === symbol)!.address;
  const body = JSON.stringify({ sellToken: token('WETH'), buyToken: token('USDC'), from: info.accounts[0]!.address, kind: 'sell', sellAmountBeforeFee: (10n ** 18n).toString() });
  const times: number[] = [];
  for (let i = 0; i < QUOTES + 5; i++) {
    const t = performance.now();
    const res = await fetch(`${node.base}/${network}/api/v1/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.text();
    if (res.status !== 200) throw new Error(`quote on ${network}: HTTP ${res.status}`);
    if (i >= 5) times.push(performance.now() - t); // the first few warm caches and connections
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function benchForkStart(): Promise<Figure[]> {
  // @ts-expect-error plain JavaScript build scripts without type declarations
  const { distIsCurrent } = await import('../scripts/build-fingerprint.mjs');
  // @ts-expect-error plain JavaScript build scripts without type declarations
  if (!distIsCurrent()) await (await import('../scripts/build.mjs')).build({ compiler: 'esbuild' });

  const devnetDir = mkdtempSync(join(tmpdir(), 'bb-bench-devnet-'));
  const forkDir = mkdtempSync(join(tmpdir(), 'bb-bench-fork-'));
  const upstream = await startMainnetUpstream({ blockTime: 2 });
  try {
    const devnet = await startNode(devnetDir, {});
    const devnetQuote = await quoteLatency(devnet, 'devnet');
    await devnet.stop();

    const first = await startNode(forkDir, { FORK_URL: upstream.rpcUrl });
    const forkQuote = await quoteLatency(first, 'mainnet');
    await first.stop();
    await upstream.stop();
    const restart = await startNode(forkDir, { FORK_URL: upstream.rpcUrl });
    await restart.stop();

    const start = (name: string, ms: number, note: string): Figure => ({
      name, value: ms / 1000, unit: 's', baseline: devnet.readyMs / 1000, baselineUnit: 's (devnet npm start, fresh DATA_DIR → /readyz)', ratio: ms / devnet.readyMs, note,
    });
    return [
      start('fork: npm start with FORK_URL, fresh DATA_DIR → /readyz 200', first.readyMs, 'reads through a local chain-1 upstream; goal ≤ 120 s'),
      start('fork: restart from DATA_DIR, upstream stopped → /readyz 200', restart.readyMs, 'offline; goal ≤ 120 s'),
      { name: 'fork: 1 WETH → USDC quote (median)', value: forkQuote, unit: 'ms', baseline: devnetQuote, baselineUnit: 'ms (same quote on the devnet)', ratio: forkQuote / devnetQuote, note: `median of ${QUOTES} sequential quotes` },
    ];
  } finally {
    await upstream.stop().catch(() => undefined);
    rmSync(devnetDir, { recursive: true, force: true });
    rmSync(forkDir, { recursive: true, force: true });
  }
}
