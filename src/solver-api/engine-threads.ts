/**
 * The built-in engines on worker threads (issue 19): an auction of thousands of orders takes the CoW matcher
 * seconds of pure arithmetic, which on the event loop would stall every request and the leadership ping. A
 * `ThreadedEngine` hands the `/solve` body (JSON text, or the parsed value) to a worker of its own, which parses,
 * checks the limits, decodes, solves and encodes (`solveBody`); the event loop only waits. The worker says the
 * auction's deadline as soon as it has decoded it, and the engine inside stops looking a margin before it; if the
 * answer is still not there at the deadline, the worker is ended and the auction answered with no solution, so
 * no caller ever waits past its deadline (at most `maxSolveMs` when the deadline is further away).
 *
 * Workers start on first use (or `warm()`) and one is kept idle for the next auction; they are unref'd (never keep the process
 * alive) and ended by `close()`. The worker code is this folder's `engine-thread-main` module, loaded through
 * tsx when running from the TypeScript sources (tests, `start:dev`) and as plain JavaScript from `dist/`.
 */
import { Worker } from 'node:worker_threads';
import type { Address } from 'viem';
import { CodecError } from './codec.js';
import { solveBody, type AuctionLimits, type BodySolver, type BuiltInEngineName, type EngineNetwork, type SolverEngine } from './engines.js';

/** What the worker needs of the network (no client: the built-ins read pools from the auction). */
export type ThreadNetwork = Omit<EngineNetwork, 'client'>;

/** A task as the worker receives it. */
export interface ThreadTask {
  engine: BuiltInEngineName;
  network: ThreadNetwork;
  body: unknown;
  limits: AuctionLimits | null;
}

/** What the worker answers: the deadline once decoded, then the JSON text or the refusal. */
export type ThreadMessage = { ready: true } | { deadline: number } | { result: string } | { codecError: string } | { error: string };

const EMPTY = JSON.stringify({ solutions: [] });

/**
 * The auction's deadline as far as it can be seen without parsing the body (epoch ms), or null: decoding thousands
 * of orders takes the thread a while, and the deadline holds from the moment the auction arrives. Only ever makes
 * the stop earlier (the decoded deadline comes later and the earlier of both holds).
 */
export function deadlineSeen(body: unknown): number | null {
  const text = typeof body === 'string' ? /"deadline"\s*:\s*"([^"]{10,40})"/.exec(body)?.[1] : (body as { deadline?: unknown } | null)?.deadline;
  const at = typeof text === 'string' ? Date.parse(text) : NaN;
  return Number.isFinite(at) ? at : null;
}

function workerSource(): { code: string; data: { main: string; tsx: string | null } } {
  const fromSources = import.meta.url.endsWith('.ts');
  const main = new URL(`./engine-thread-main.${fromSources ? 'ts' : 'js'}`, import.meta.url).href;
  const tsx = fromSources ? import.meta.resolve('tsx/esm/api') : null;
  const code = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.main);
})();
`;
  return { code, data: { main, tsx } };
}

export interface ThreadedEngineOptions {
  /**
   * longest an auction may take whatever its deadline says, ms (default 60 s: the longest SOLVER_TIME_LIMIT_MS);
   * also the bound while its deadline is not known yet (a thread still loading, a body being parsed)
   */
  maxSolveMs?: number;
  /**
   * solves in this process while no thread has finished loading (the driver's own engines: its first auctions after
   * a start); without it an auction waits for its thread
   */
  fallback?: SolverEngine | null;
}

export class ThreadedEngine implements BodySolver {
  private idle: Worker | null = null;
  private readonly busy = new Set<Worker>();
  private closed = false;
  private warmed = false;
  private readonly maxSolveMs: number;
  private readonly fallback: SolverEngine | null;
  /** threads that said they finished loading */
  private readonly loaded = new WeakSet<Worker>();

  constructor(
    readonly name: BuiltInEngineName,
    private readonly network: ThreadNetwork,
    options: ThreadedEngineOptions = {},
  ) {
    this.maxSolveMs = options.maxSolveMs ?? 60_000;
    this.fallback = options.fallback ?? null;
    this.network = { chainId: network.chainId, settlement: network.settlement, amm: network.amm, connectors: [...network.connectors] as Address[], wrappedNative: network.wrappedNative };
  }

  /** Threads running now (idle or busy). */
  get threads(): number {
    return this.busy.size + (this.idle ? 1 : 0);
  }

  solveBody(body: unknown, limits: AuctionLimits | null): Promise<string> {
    if (this.closed) return Promise.reject(new Error(`${this.name}: closed`));
    if (this.fallback && !(this.idle && this.loaded.has(this.idle))) {
      this.warm();
      return solveBody(this.fallback, body, { limits });
    }
    const worker = this.idle ?? this.start();
    this.idle = null;
    this.busy.add(worker);
    const received = Date.now();
    return new Promise<string>((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const settle = (end: () => void, keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        this.busy.delete(worker);
        if (keep && !this.closed && this.idle === null) this.idle = worker;
        else {
          void worker.terminate();
          if (this.warmed) this.warm(); // a warmed engine has its next thread ready too
        }
        end();
      };
      let stop = received + this.maxSolveMs;
      const stopAt = (at: number) => {
        stop = Math.min(stop, at);
        clearTimeout(timer);
        timer = setTimeout(() => settle(() => resolve(EMPTY), false), Math.max(0, stop - Date.now()));
      };
      const onMessage = (m: ThreadMessage) => {
        if ('ready' in m) return;
        if ('deadline' in m) return stopAt(m.deadline);
        if ('result' in m) return settle(() => resolve(m.result), true);
        if ('codecError' in m) return settle(() => reject(new CodecError(m.codecError)), true);
        settle(() => reject(new Error(`${this.name}: ${m.error}`)), true);
      };
      const onError = (err: Error) => settle(() => reject(new Error(`${this.name}: the engine thread failed (${err.message})`)), false);
      const onExit = (code: number) => settle(() => reject(new Error(`${this.name}: the engine thread exited (${code})`)), false);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      stopAt(deadlineSeen(body) ?? stop);
      const task: ThreadTask = { engine: this.name, network: this.network, body, limits };
      worker.postMessage(task);
    });
  }

  /** Starts a thread now (its modules load meanwhile), so the first auction does not wait for them. */
  warm(): void {
    this.warmed = true;
    if (!this.closed && this.idle === null) this.idle = this.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.busy, ...(this.idle ? [this.idle] : [])];
    this.idle = null;
    await Promise.all(all.map((w) => w.terminate()));
  }

  private start(): Worker {
    const { code, data } = workerSource();
    const worker = new Worker(code, { eval: true, workerData: data });
    worker.unref();
    worker.on('message', (m: ThreadMessage) => {
      if ('ready' in m) this.loaded.add(worker);
    });
    // an idle worker that fails is simply forgotten (a busy one fails its auction through its own listeners)
    worker.on('error', () => {
      if (this.idle === worker) this.idle = null;
    });
    worker.on('exit', () => {
      if (this.idle === worker) this.idle = null;
    });
    return worker;
  }
}
