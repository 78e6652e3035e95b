/**
 * ECDSA signer recovery on worker threads. Recovering an order's signer is pure curve arithmetic of about 2 ms
 * (viem / noble, BigInt): on the event loop it would take a third of each order's time and stall every other
 * request meanwhile. The pool runs it on `threads` worker threads instead, so intake uses the machine's other
 * cores; with no thread to spare (one core) it recovers on the calling thread, as before.
 *
 * The workers are plain CommonJS evaluated from a string that `require`s viem by its resolved path, so the same
 * code runs from the TypeScript sources (tsx) and from the compiled `dist/`, whatever the working directory.
 * They are unref'd (they never keep the process alive) and ended by `close()`. A worker that dies fails the
 * recoveries it had and is replaced on the next one.
 *
 * @example
 *   const pool = new EcdsaRecoveryPool();
 *   const owner = await recoverOrderSigner({ scheme: 'eip712', signature, digest }, pool.recover);
 *   await pool.close();
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { recoverAddress, type Address, type Hex } from 'viem';
import type { RecoverAddress } from '../protocol/index.js';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { recoverAddress } = require(workerData.viem);
parentPort.on('message', ({ id, hash, signature }) => {
  recoverAddress({ hash, signature }).then(
    (address) => parentPort.postMessage({ id, address }),
    (err) => parentPort.postMessage({ id, error: String((err && err.message) || err) }),
  );
});
`;

interface Pending {
  resolve(address: Address): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/** Threads to use by default: the cores beyond the event loop's, at most 4 (0 on a single core). */
export function defaultRecoveryThreads(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

export class EcdsaRecoveryPool {
  private readonly threads: Array<Thread | null>;
  private readonly viemPath = createRequire(import.meta.url).resolve('viem');
  private next = 0;
  private ids = 0;
  private closed = false;

  constructor(threads = defaultRecoveryThreads()) {
    this.threads = Array.from({ length: threads }, () => null);
  }

  /** The signer of a 32-byte hash and a 65-byte signature (v 27/28); a `RecoverAddress` for recoverEcdsaSigner. */
  readonly recover: RecoverAddress = (hash: Hex, signature: Hex): Promise<Address> => {
    if (this.threads.length === 0 || this.closed) return recoverAddress({ hash, signature });
    const thread = this.thread();
    const id = this.ids++;
    return new Promise<Address>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, hash, signature });
    });
  };

  /** Worker threads running now. */
  get running(): number {
    return this.threads.filter((t) => t !== null).length;
  }

  /** Ends the workers; recoveries still waiting fail, later ones run on the calling thread. */
  async close(): Promise<void> {
    this.closed = true;
    const running = this.threads.filter((t): t is Thread => t !== null);
    this.threads.fill(null);
    await Promise.all(running.map((t) => t.worker.terminate()));
  }

  /** The least busy thread, started if it is not running (round robin among equals). */
  private thread(): Thread {
    let best = -1;
    for (let k = 0; k < this.threads.length; k++) {
      const i = (this.next + k) % this.threads.length;
      const t = this.threads[i];
      if (!t) {
        best = i;
        break;
      }
      if (best === -1 || t.pending.size < this.threads[best]!.pending.size) best = i;
    }
    this.next = (best + 1) % this.threads.length;
    return this.threads[best] ?? this.start(best);
  }

  private start(slot: number): Thread {
    const worker = new Worker(WORKER, { eval: true, workerData: { viem: this.viemPath } });
    worker.unref();
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', (m: { id: number; address?: Address; error?: string }) => {
      const p = thread.pending.get(m.id);
      if (!p) return;
      thread.pending.delete(m.id);
      if (m.address) p.resolve(m.address);
      else p.reject(new Error(m.error ?? 'recovery failed'));
    });
    const fail = (err: Error) => {
      if (this.threads[slot] === thread) this.threads[slot] = null;
      for (const p of thread.pending.values()) p.reject(err);
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the signature recovery thread exited (${code})`)));
    this.threads[slot] = thread;
    return thread;
  }
}
