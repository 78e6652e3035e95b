/**
 * A whole batchbook node for other projects' tests: `startBatchbook()` runs the compiled node in a child process on
 * free ports with its own temporary data directory, resolves once `GET /readyz` answers 200, and `stop()` ends
 * it (and its anvil), waits until its ports are closed and removes the temporary data. Nothing is global: any
 * number of instances run side by side, in one process or in several. The child is tied to this process by an
 * IPC channel: if this process dies (even `kill -9`), the node notices the channel closing and stops itself and
 * its anvil.
 *
 * @example
 *   const bb = await startBatchbook({ deterministic: true });
 *   const orderBook = new OrderBookApi({ chainId: 31337, baseUrls: { 31337: bb.orderBookUrl } });
 *   await bb.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetAccount, DevnetContracts, DevnetPool, DevnetToken } from '../chain/devnet/deployment.js';
import { isNodeReadyMessage, type NodeReadyMessage, type TemporaryDataDirMessage } from './node-messages.js';
import { prepareTemplates } from './templates.js';
import { nodeEntryPoint } from './node-entry.js';
import { servedNetworkName } from '../protocol/networks.js';

export interface StartBatchbookOptions {
  /** HTTP port of the node; default 0: a free port */
  port?: number;
  /** JSON-RPC port of the devnet's anvil; default 0: a free port */
  devnetPort?: number;
  /**
   * Where the node keeps its database and chain; default: a new temporary directory under `os.tmpdir()` that
   * `stop()` removes. A directory you give is kept (and reused by the next start on it).
   */
  dataDir?: string;
  /**
   * Deterministic mode (`DETERMINISTIC=true`): no market bot and no history, a fixed genesis timestamp and gas
   * prices, blocks only from `mine`, `time`, a transaction or a settlement, auctions only from `auctions/run`
   * (unless resumed), and the chain's time for order intake, quotes and expiry.
   */
  deterministic?: boolean;
  /** Run the devnet as a fork of a live chain (`FORK_URL`, `FORK_BLOCK`; needs a node with fork mode). */
  fork?: { url: string; block?: number | bigint };
  /**
   * Any other configuration of this instance, as environment variables (see `.env.example`). The node sees only
   * these and the options above, not this process's environment (beyond PATH, HOME and the temporary directory).
   * Defaults that differ from `npm start`: `LOG_LEVEL=warn` and no rate limits (`RATE_LIMIT_*=0`).
   */
  env?: Record<string, string>;
  /** How long the node may take to be ready before the start fails (default 120 000 ms). */
  startTimeoutMs?: number;
  /** Receives every line the node logs (JSON lines; default: kept for error messages only). */
  onLog?: (line: string) => void;
}

/** What `GET {url}/devnet` describes (`contracts`, `tokens`, `accounts` are copied onto the handle). */
export interface DevnetDescription {
  chainId: number;
  rpcUrl: string;
  blockTime: number;
  contracts: DevnetContracts;
  tokens: DevnetToken[];
  pools: DevnetPool[];
  accounts: DevnetAccount[];
  /** fork mode: the chain forked and the fork block */
  fork?: { chainId: number; block: number };
}

export interface Batchbook {
  /** `http://127.0.0.1:<port>` (no trailing slash): the auxiliary API, `/docs`, `/readyz`, the control API */
  url: string;
  /** the devnet's order book base URL for the SDK (`url + '/devnet'`; fork mode: the chain's name, e.g. `url + '/mainnet'`; the API is under `/api/v1`) */
  orderBookUrl: string;
  /** fork mode: the chain forked and the fork block (null: the devnet) */
  fork: { chainId: number; block: number } | null;
  /** the devnet's JSON-RPC URL */
  rpcUrl: string;
  chainId: number;
  /** as `GET {url}/devnet` lists them */
  contracts: DevnetContracts;
  tokens: DevnetToken[];
  accounts: DevnetAccount[];
  /** the node's data directory */
  dataDir: string;
  /** the node's process id */
  pid: number;
  /**
   * Stops the node; resolves once every process it started (the node, anvil) has exited, their ports are closed
   * and the temporary data directory is gone. Idempotent.
   */
  stop(): Promise<void>;
}

/** A start that did not get ready: why, with the last lines the node logged. */
export class BatchbookStartError extends Error {
  constructor(
    message: string,
    readonly logTail: string,
  ) {
    super(logTail ? `${message}\n${logTail}` : message);
    this.name = 'BatchbookStartError';
  }
}

/** Variables of this process the node inherits: what a child process needs to run, no configuration. */
const INHERITED_ENV = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT', 'USERPROFILE', 'LANG', 'TZ'];
const LOG_TAIL_LINES = 40;

export async function startBatchbook(options: StartBatchbookOptions = {}): Promise<Batchbook> {
  const entry = nodeEntryPoint();
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'batchbook-'));
  const removeDataDir = (): void => {
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // the prepared chain and database this start copies (made once, shared by every instance)
    await prepareTemplates({ deterministic: options.deterministic ?? false, env: options.env ?? {} });
  } catch (err) {
    removeDataDir();
    throw err;
  }

  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  Object.assign(env, {
    HOST: '127.0.0.1',
    PORT: String(options.port ?? 0),
    DEVNET_PORT: String(options.devnetPort ?? 0),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_QUOTE: '0',
    RATE_LIMIT_ORDERS: '0',
    RATE_LIMIT_OTHER: '0',
    ...(options.deterministic ? { DETERMINISTIC: 'true' } : {}),
    ...(options.fork ? { FORK_URL: options.fork.url, ...(options.fork.block !== undefined ? { FORK_BLOCK: String(options.fork.block) } : {}) } : {}),
    ...options.env,
  });

  // cwd = the data dir: no `.env` of the caller's project is read, and nothing lands in its ./.batchbook
  const child = spawn(process.execPath, [entry], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], windowsHide: true });
  if (ownsDataDir) child.send({ type: 'batchbook:temporary-data-dir' } satisfies TemporaryDataDirMessage);
  const tail: string[] = [];
  const keep = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      options.onLog?.(line);
      tail.push(line);
      if (tail.length > LOG_TAIL_LINES) tail.shift();
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // this process may end without stop(): the channel then closes and the node stops itself
  child.unref();
  child.channel?.unref();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  (child.stderr as unknown as { unref?: () => void }).unref?.();

  let ready: NodeReadyMessage;
  try {
    ready = await waitForReady(child, exited, options.startTimeoutMs ?? 120_000, () => tail.join('\n'));
    await waitForReadyz(ready.url, options.startTimeoutMs ?? 120_000);
  } catch (err) {
    await terminate(child, exited, recordedAnvilPid(dataDir));
    removeDataDir();
    throw err;
  }

  let description: DevnetDescription;
  try {
    description = await getJson<DevnetDescription>(`${ready.url}/devnet`);
  } catch (err) {
    await terminate(child, exited, ready.anvilPid);
    removeDataDir();
    throw new BatchbookStartError(`GET ${ready.url}/devnet failed: ${(err as Error).message}`, tail.join('\n'));
  }

  let stopping: Promise<void> | null = null;
  return {
    url: ready.url,
    orderBookUrl: `${ready.url}/${description.fork ? servedNetworkName(description.chainId).name : 'devnet'}`,
    fork: description.fork ?? null,
    rpcUrl: description.rpcUrl,
    chainId: description.chainId,
    contracts: description.contracts,
    tokens: description.tokens,
    accounts: description.accounts,
    dataDir,
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        await terminate(child, exited, ready.anvilPid);
        await Promise.all([portClosed(ready.url), ...(ready.rpcUrl ? [portClosed(ready.rpcUrl)] : [])]);
        removeDataDir();
      })();
      return stopping;
    },
  };
}

function waitForReady(
  child: ChildProcess,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  timeoutMs: number,
  logTail: () => string,
): Promise<NodeReadyMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(() => reject(new BatchbookStartError(`batchbook was not ready within ${timeoutMs} ms`, logTail()))), timeoutMs);
    const onMessage = (message: unknown): void => {
      if (isNodeReadyMessage(message)) finish(() => resolve(message));
    };
    let done = false;
    function finish(settle: () => void): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.off('message', onMessage);
      settle();
    }
    child.on('message', onMessage);
    void exited.then(({ code, signal }) => finish(() => reject(new BatchbookStartError(`batchbook exited before it was ready (code ${code}, signal ${signal})`, logTail()))));
  });
}

async function waitForReadyz(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet: try again
    }
    if (Date.now() > deadline) throw new BatchbookStartError(`GET ${url}/readyz did not answer 200 within ${timeoutMs} ms`, '');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

/** The anvil a node started, as its pid file records it (a node stopped during start-up has not reported it). */
function recordedAnvilPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'devnet-chain', 'anvil.pid'), 'utf8').split(/\s+/)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The process exists and is not a zombie (an exited child nobody reaped yet counts as gone). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): kill(0) is the answer
  }
}

/** SIGTERM (the node stops its loops and anvil, anvil saves its chain), SIGKILL after 15 s; then anvil is gone too. */
async function terminate(child: ChildProcess, exited: Promise<unknown>, anvilPid: number | null): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  if (anvilPid === null) return;
  // the node waits for its anvil; this covers a node that was killed before it could
  const deadline = Date.now() + 10_000;
  while (isRunning(anvilPid) && Date.now() < deadline + 5_000) {
    if (Date.now() > deadline) {
      try {
        process.kill(anvilPid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once nothing accepts connections on the URL's port. */
async function portClosed(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  for (let i = 0; i < 200; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (!open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
