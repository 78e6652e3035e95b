/**
 * A short-lived anvil fork of a chain: its own process on a free local port, pinned to one block of the
 * source node, accepting transactions from any sender (`--auto-impersonate`), mining only when told to
 * (`--no-mining`, so each transaction is mined by an explicit `evm_mine` and its receipt exists the moment that
 * call returns; `--order fifo`, so transactions mined together keep the order they were sent in), with a zero base fee (so a transaction with gas price 0 is valid: simulating costs nothing), and
 * no on-disk RPC cache. Nothing it does reaches the source chain: a fork only reads from it.
 *
 * @example
 *   const fork = await startFork({ sourceUrl, blockNumber: 123n, signal, readyTimeoutMs: 10_000, upstreamTimeoutMs: 5_000 });
 *   try { ... rpcCall(fork.url, 'eth_sendTransaction', ...) } finally { await fork.kill(); }
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { answersChainId, findFreePort, resolveAnvilBinary } from '../../chain/devnet/anvil-process.js';

export interface ForkOptions {
  /** JSON-RPC URL of the chain to fork (http(s) or ws(s)) */
  sourceUrl: string;
  /** pin the fork to this block; null = the source's latest */
  blockNumber: bigint | null;
  /** default: the binary of the installed @foundry-rs/anvil platform package */
  binaryPath?: string;
  readyTimeoutMs: number;
  /** anvil's timeout for each request it sends to the source node */
  upstreamTimeoutMs: number;
  /** aborting during start-up kills the fork; once started, the caller owns it (see ForkNode.kill) */
  signal?: AbortSignal;
}

export interface ForkNode {
  readonly url: string;
  readonly pid: number;
  /** false once the process has exited */
  alive(): boolean;
  /** SIGKILL (a fork has no state worth saving); resolves once the process is gone. Idempotent. */
  kill(): Promise<void>;
  outputTail(): string;
}

export type ForkStartFailure =
  /** the anvil binary is missing or cannot be run: a server-side problem */
  | 'binary'
  /** anvil exited during start-up: almost always because the source node could not be read */
  | 'exited'
  /** anvil did not answer in time */
  | 'timeout';

export class ForkStartError extends Error {
  constructor(readonly reason: ForkStartFailure, message: string) {
    super(message);
    this.name = 'ForkStartError';
  }
}

const TAIL_LINES = 12;
export async function startFork(options: ForkOptions): Promise<ForkNode> {
  let binary: string;
  try {
    binary = options.binaryPath ?? resolveAnvilBinary();
  } catch (err) {
    throw new ForkStartError('binary', (err as Error).message);
  }
  // A port that was free a moment ago can be taken by a concurrent fork: retry on "address in use".
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binary, await findFreePort(), options);
    } catch (err) {
      if (attempt < 3 && err instanceof ForkStartError && err.reason === 'exited' && /address (already )?in use/i.test(err.message)) continue;
      throw err;
    }
  }
}

async function startOnce(binary: string, port: number, options: ForkOptions): Promise<ForkNode> {
  options.signal?.throwIfAborted();
  const host = '127.0.0.1';
  const url = `http://${host}:${port}`;
  const args = [
    '--fork-url', options.sourceUrl,
    ...(options.blockNumber !== null ? ['--fork-block-number', options.blockNumber.toString()] : []),
    '--auto-impersonate',
    '--no-mining',
    // a bundle mined in one block keeps the order it was sent in
    '--order', 'fifo',
    '--block-base-fee-per-gas', '0',
    '--no-storage-caching',
    '--retries', '1',
    '--timeout', String(options.upstreamTimeoutMs),
    '--host', host,
    '--port', String(port),
    '--silent',
  ];
  let child: ChildProcess;
  try {
    child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  } catch (err) {
    throw new ForkStartError('binary', `cannot run anvil at ${binary}: ${(err as Error).message}`);
  }
  // if node exits without killing the fork (crash, process.exit), do not leave an orphaned anvil behind; the
  // listener belongs to this fork and goes with it
  const killOnParentExit = () => child.kill('SIGKILL');
  process.on('exit', killOnParentExit);
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      tail.push(line.replaceAll(options.sourceUrl, '<source rpc>'));
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | null = null;
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      gone = true;
      process.removeListener('exit', killOnParentExit);
      resolve();
    };
    child.once('exit', done);
    child.once('error', (err) => {
      spawnError = err;
      done();
    });
  });
  const kill = async () => {
    if (!gone) child.kill('SIGKILL');
    await exited;
  };
  const onAbort = () => void kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const outputTail = () => tail.join('\n');

  const deadline = Date.now() + options.readyTimeoutMs;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (gone) {
        if (spawnError) {
          const code = (spawnError as NodeJS.ErrnoException).code;
          throw new ForkStartError(code === 'ENOENT' || code === 'EACCES' ? 'binary' : 'exited', `cannot run anvil: ${(spawnError as Error).message}`);
        }
        throw new ForkStartError('exited', `the fork node exited during start-up${tail.length ? `: ${outputTail()}` : ''}`);
      }
      if (await answersChainId(url)) break;
      if (Date.now() > deadline) throw new ForkStartError('timeout', `the fork node did not start within ${options.readyTimeoutMs} ms${tail.length ? `: ${outputTail()}` : ''}`);
      await new Promise((r) => setTimeout(r, 15));
    }
  } catch (err) {
    await kill();
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  return {
    url,
    pid: child.pid ?? -1,
    outputTail,
    alive: () => !gone,
    kill,
  };
}

