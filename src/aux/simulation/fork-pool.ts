/**
 * A small pool of anvil forks per source node, so that a simulation does not pay for starting a process
 * (~100–300 ms) each time. A fork serves one simulation at a time; before each use it goes back to the snapshot
 * taken at its block when the requested block is still that one (`evm_revert`, a few ms), else it is reset to the
 * requested block with `anvil_reset` (~40–80 ms), which discards everything the previous simulation did and re-reads the
 * source, and its block number is checked. A fork that misbehaved, whose simulation failed or was aborted, or
 * that stayed idle longer than `idleTtlMs`, is killed rather than reused.
 *
 * @example
 *   const lease = await pool.acquire(rpcUrl, head, signal);
 *   try { ...lease.fork.url... ; await lease.release(true) } catch { await lease.release(false) }
 */
import { startFork, type ForkNode, type ForkOptions } from './anvil-fork.js';
import { rpcCall } from './json-rpc.js';

export interface ForkPoolOptions {
  /** idle forks kept per source node (0 = start a fresh fork for every simulation) */
  maxIdlePerSource: number;
  /** kill a fork idle this long */
  idleTtlMs: number;
  /** timeout of the reset call */
  rpcTimeoutMs: number;
  startOptions: Omit<ForkOptions, 'sourceUrl' | 'blockNumber' | 'signal'>;
}

export interface ForkLease {
  readonly fork: ForkNode;
  /** true if it came from the pool (reset) rather than freshly started */
  readonly reused: boolean;
  /** healthy: return the fork to the pool; otherwise kill it. Idempotent. */
  release(healthy: boolean): Promise<void>;
}

interface IdleFork {
  fork: ForkNode;
  timer: NodeJS.Timeout;
}

export class ForkPool {
  private readonly idle = new Map<string, IdleFork[]>();
  private readonly inUse = new Set<ForkNode>();
  /** the block a fork is pinned to and the snapshot of its state there, taken before its current lease */
  private readonly pinned = new WeakMap<ForkNode, { block: bigint; snapshot: string }>();
  private closed = false;

  constructor(private readonly options: ForkPoolOptions) {}

  /** Forks alive in this pool, idle or in use. */
  size(): number {
    let n = this.inUse.size;
    for (const list of this.idle.values()) n += list.length;
    return n;
  }

  async acquire(sourceUrl: string, blockNumber: bigint | null, signal: AbortSignal): Promise<ForkLease> {
    if (this.closed) throw new Error('the fork pool is closed');
    for (let candidate = this.takeIdle(sourceUrl); candidate; candidate = this.takeIdle(sourceUrl)) {
      this.inUse.add(candidate);
      if (await this.reset(candidate, sourceUrl, blockNumber, signal)) return this.lease(candidate, sourceUrl, true);
      this.inUse.delete(candidate);
      await candidate.kill();
      signal.throwIfAborted();
    }
    const fork = await startFork({ ...this.options.startOptions, sourceUrl, blockNumber, signal });
    if (this.closed) {
      await fork.kill();
      throw new Error('the fork pool is closed');
    }
    this.inUse.add(fork);
    try {
      await this.pin(fork, blockNumber, signal);
    } catch {
      // no snapshot: the next lease resets it
    }
    return this.lease(fork, sourceUrl, false);
  }

  /** Kills every idle fork and refuses new leases; forks in use are killed when released. */
  async close(): Promise<void> {
    this.closed = true;
    const all: ForkNode[] = [];
    for (const list of this.idle.values()) {
      for (const entry of list) {
        clearTimeout(entry.timer);
        all.push(entry.fork);
      }
    }
    this.idle.clear();
    await Promise.all(all.map((f) => f.kill()));
  }

  private takeIdle(sourceUrl: string): ForkNode | null {
    const list = this.idle.get(sourceUrl);
    while (list && list.length > 0) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (entry.fork.alive()) return entry.fork;
    }
    return null;
  }

  private async reset(fork: ForkNode, sourceUrl: string, blockNumber: bigint | null, signal: AbortSignal): Promise<boolean> {
    const pinned = this.pinned.get(fork);
    this.pinned.delete(fork);
    const opts = { signal, timeoutMs: this.options.rpcTimeoutMs };
    try {
      // still at the requested block: going back to the snapshot taken there is enough (no re-read of the source)
      if (pinned && blockNumber !== null && pinned.block === blockNumber && (await rpcCall<boolean>(fork.url, 'evm_revert', [pinned.snapshot], opts))) {
        await this.pin(fork, blockNumber, signal);
        return true;
      }
    } catch {
      // fall through to a full reset
    }
    try {
      const forking = blockNumber === null ? { jsonRpcUrl: sourceUrl } : { jsonRpcUrl: sourceUrl, blockNumber: Number(blockNumber) };
      await rpcCall(fork.url, 'anvil_reset', [{ forking }], { signal, timeoutMs: this.options.rpcTimeoutMs });
      if (blockNumber === null) return true;
      const now = await rpcCall<string>(fork.url, 'eth_blockNumber', [], { signal, timeoutMs: this.options.rpcTimeoutMs });
      if (BigInt(now) !== blockNumber) return false;
      await this.pin(fork, blockNumber, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Remembers a snapshot of the fork's pristine state at `blockNumber`, for the next lease at the same block. */
  private async pin(fork: ForkNode, blockNumber: bigint | null, signal: AbortSignal): Promise<void> {
    if (blockNumber === null) return;
    const snapshot = await rpcCall<string>(fork.url, 'evm_snapshot', [], { signal, timeoutMs: this.options.rpcTimeoutMs });
    this.pinned.set(fork, { block: blockNumber, snapshot });
  }

  private lease(fork: ForkNode, sourceUrl: string, reused: boolean): ForkLease {
    let released = false;
    return {
      fork,
      reused,
      release: async (healthy) => {
        if (released) return;
        released = true;
        this.inUse.delete(fork);
        const list = this.idle.get(sourceUrl) ?? [];
        if (!healthy || this.closed || !fork.alive() || list.length >= this.options.maxIdlePerSource) {
          await fork.kill();
          return;
        }
        const timer = setTimeout(() => {
          const at = list.findIndex((e) => e.fork === fork);
          if (at >= 0) list.splice(at, 1);
          void fork.kill();
        }, this.options.idleTtlMs);
        timer.unref();
        list.push({ fork, timer });
        this.idle.set(sourceUrl, list);
      },
    };
  }
}
