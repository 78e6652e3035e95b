// Runs the anvil binary shipped in the @foundry-rs/anvil-<platform> npm package as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { forgetAnvilPid, recordAnvilPid, stopOrphanedAnvil } from './orphaned-anvil.js';

/** The devnet is chain 31337, always: with the canonical settlement address a public chain id would make
 *  devnet signatures replayable on that chain. */
export const DEVNET_CHAIN_ID = 31337;

export interface AnvilExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AnvilOptions {
  /** 0: a free port chosen at start (tried again on another one if it is taken before anvil binds it) */
  port: number;
  /** default 31337 (the devnet); tests stand in for a real chain's node with another id */
  chainId?: number;
  /** Path to the anvil binary; default: the one from the installed platform package. */
  binaryPath?: string;
  /** `--state` file: loaded if it exists, dumped on exit and every `stateIntervalSeconds`. */
  statePath?: string | null;
  stateIntervalSeconds?: number;
  /** Genesis block timestamp (seconds); only meaningful for a fresh chain. */
  genesisTimestamp?: number;
  /** Start with mining off (`--no-mining`); the caller switches it on with evm_setIntervalMining. Default true. */
  noMining?: boolean;
  /** How long to wait for `eth_chainId` to answer. Default 15 s. */
  readyTimeoutMs?: number;
  extraArgs?: string[];
  /** Where the child's pid is recorded while it runs: an anvil that outlived a killed node (`kill -9` never lets
   *  node stop it) is found there on the next start and stopped first, which dumps its state (orphaned-anvil.ts). */
  pidFile?: string | null;
}

export interface AnvilProcess {
  readonly pid: number;
  readonly rpcUrl: string;
  /** Resolves once the process has exited, for whatever reason (never rejects). */
  readonly exited: Promise<AnvilExit>;
  /** The last lines anvil wrote to stderr/stdout (for error messages). */
  outputTail(): string;
  /** SIGTERM (anvil dumps its state), then SIGKILL after `timeoutMs` (default 10 s). Idempotent. */
  stop(timeoutMs?: number): Promise<AnvilExit>;
}

export type AnvilStartFailure = 'unsupported-platform' | 'binary-missing' | 'port-in-use' | 'exited' | 'timeout';

export class AnvilStartError extends Error {
  constructor(
    readonly reason: AnvilStartFailure,
    message: string,
  ) {
    super(message);
    this.name = 'AnvilStartError';
  }
}

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** Locates the anvil binary inside the platform package that npm installed as an optional dependency. */
export function resolveAnvilBinary(): string {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) throw new AnvilStartError('unsupported-platform', `no anvil binary is published for ${key}`);
  const require = createRequire(import.meta.url);
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new AnvilStartError(
      'binary-missing',
      `the anvil binary package ${pkg} is not installed (optional dependencies omitted?); run npm install without --omit=optional`,
    );
  }
  const binary = join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new AnvilStartError('binary-missing', `anvil binary missing at ${binary}`);
  return binary;
}

/** A TCP port that was free a moment ago on 127.0.0.1 (for tests and ephemeral devnets). */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}

function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

const TAIL_LINES = 20;

export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  if (options.port !== 0) return startAnvilOnPort(options);
  // another process may take the free port between the check and anvil's bind: then anvil exits, try another
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAnvilOnPort({ ...options, port: await findFreePort() });
    } catch (err) {
      if (!(err instanceof AnvilStartError && (err.reason === 'port-in-use' || err.reason === 'exited')) || attempt >= 5) throw err;
    }
  }
}

async function startAnvilOnPort(options: AnvilOptions): Promise<AnvilProcess> {
  const binary = options.binaryPath ?? resolveAnvilBinary();
  const host = '127.0.0.1';
  if (options.pidFile) await stopOrphanedAnvil(options.pidFile);
  // Otherwise a server already on the port (say, another anvil) would answer the readiness probe for us.
  if (!(await isPortFree(host, options.port))) {
    throw new AnvilStartError('port-in-use', `port ${options.port} on ${host} is already in use (set DEVNET_PORT to a free port)`);
  }
  const rpcUrl = `http://${host}:${options.port}`;
  const args = ['--host', host, '--port', String(options.port), '--chain-id', String(options.chainId ?? DEVNET_CHAIN_ID), '--silent'];
  if (options.noMining ?? true) args.push('--no-mining');
  if (options.genesisTimestamp !== undefined) args.push('--timestamp', String(Math.floor(options.genesisTimestamp)));
  if (options.statePath) {
    args.push('--state', options.statePath, '--state-interval', String(options.stateIntervalSeconds ?? 10));
  }
  if (options.extraArgs) args.push(...options.extraArgs);

  // Own process group: a Ctrl-C in the terminal reaches node only, which then stops anvil in order (state dump)
  // instead of anvil exiting on its own while the server still uses it.
  const child: ChildProcess = spawn(binary, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
    detached: process.platform !== 'win32',
  });
  if (options.pidFile && child.pid) recordAnvilPid(options.pidFile, child.pid);
  const tail: string[] = [];
  const keep = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  let exitInfo: AnvilExit | null = null;
  const exited = new Promise<AnvilExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      if (options.pidFile) forgetAnvilPid(options.pidFile, child.pid);
      process.removeListener('exit', killOnParentExit);
      resolve(exitInfo);
    });
    child.once('error', (err) => {
      keep(Buffer.from(String(err.message)));
      // 'exit' may not follow a spawn error (e.g. ENOENT); make sure `exited` settles.
      if (!exitInfo) {
        exitInfo = { code: null, signal: null };
        process.removeListener('exit', killOnParentExit);
        resolve(exitInfo);
      }
    });
  });
  // If node exits without stopping us (crash, process.exit), do not leave an orphaned anvil behind.
  function killOnParentExit(): void {
    if (!exitInfo) child.kill('SIGKILL');
  }
  process.on('exit', killOnParentExit);

  const outputTail = (): string => tail.join('\n');

  let stopping: Promise<AnvilExit> | null = null;
  const stop = (timeoutMs = 10_000): Promise<AnvilExit> => {
    if (exitInfo) return Promise.resolve(exitInfo);
    stopping ??= (async () => {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
      const first = await Promise.race([exited, deadline]);
      clearTimeout(timer);
      if (first === 'timeout') {
        child.kill('SIGKILL');
        return exited;
      }
      return first;
    })();
    return stopping;
  };

  // Wait until the JSON-RPC endpoint answers, the process dies, or the timeout passes.
  const readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
  const started = Date.now();
  for (;;) {
    if (exitInfo) {
      const e = exitInfo as AnvilExit;
      throw new AnvilStartError(
        'exited',
        `anvil exited before it was ready (code ${e.code}, signal ${e.signal})${outputTail() ? `: ${outputTail()}` : ''}`,
      );
    }
    if (await answersChainId(rpcUrl)) break;
    if (Date.now() - started > readyTimeoutMs) {
      await stop(2_000);
      throw new AnvilStartError(
        'timeout',
        `anvil did not answer eth_chainId on ${rpcUrl} within ${readyTimeoutMs} ms${outputTail() ? `: ${outputTail()}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }

  return { pid: child.pid ?? -1, rpcUrl, exited, outputTail, stop };
}

/** True when a JSON-RPC node at `url` answers eth_chainId within a second (used while waiting for anvil to listen). */
export async function answersChainId(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    if (!res.ok) return false;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string';
  } catch {
    return false;
  }
}
