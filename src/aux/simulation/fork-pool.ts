/**
 * A small pool of anvil forks per source node, so that a simulation does not pay for starting a process
 * (~100–300 ms) each time. A fork serves one simulation at a time; before each use it goes back to a snapshot
 * taken at its block when the requested block is still that one (`evm_revert`, one round trip, sent while the
 * requested block is still being read from the source), else it is reset
 * to the requested block with `anvil_reset` (~40–80 ms), which discards everything the previous simulation did
 * and re-reads the source, and its block number is checked. A fork that misbehaved, whose simulation failed or
 * was aborted, or that stayed idle longer than `idleTtlMs`, is killed rather than reused.
 *
 * A fork released in good health goes back to a snapshot at once, while it waits in the pool (not when the next
 * lease asks for it), so a lease at the same block finds it ready; the next lease waits for that to finish.
 *
 * Early leases: a fork pinned to the block its last lease was at goes back to its snapshot there and is leased
 * at once, without waiting for the requested block; the lease's `confirmed` says later whether that block is the
 * requested one (false: the lease's work does not count, and the next acquire resets the fork). A simulation
 * then runs while the source's head is read, rather than after.
 *
 * `evm_revert` consumes the snapshot it goes back to but keeps the ones taken before it, so a fork is pinned with
 * several snapshots of the same pristine state at once (one batch): each lease at that block spends one, and only
 * every few leases does a fork take new ones. The fork's latest block (number, gas limit) is read with them and
 * handed to each lease, which then need not read it again.
 *
 * @example
 *   const lease = await pool.acquire(rpcUrl, head, signal);
 *   try { ...lease.fork.url... ; await lease.release(true) } catch { await lease.release(false) }
 */
import { startFork, type ForkNode, type ForkOptions } from './anvil-fork.js';
import { rpcBatch, rpcCall, RpcCallError } from './json-rpc.js';

export interface ForkPoolOptions {
  /** idle forks kept per source node (0 = start a fresh fork for every simulation) */
  maxIdlePerSource: number;
  /** kill a fork idle this long */
  idleTtlMs: number;
  /** timeout of the reset call */
  rpcTimeoutMs: number;
  startOptions: Omit<ForkOptions, 'sourceUrl' | 'blockNumber' | 'signal'>;
}

/** The latest block of a fork when it was pinned, which is its latest block again at the start of each lease. */
export interface ForkBlock {
  number: string;
  gasLimit: string;
}

/** Snapshots taken at once when a fork is pinned: that many leases at its block before it takes new ones. */
const SPARE_SNAPSHOTS = 8;

export interface ForkLease {
  readonly fork: ForkNode;
  /** the fork's latest block at the start of the lease; null when unknown (a fork not pinned to a block) */
  readonly block: ForkBlock | null;
  /** true if it came from the pool (reset) rather than freshly started */
  readonly reused: boolean;
  /**
   * an early lease (see `acquire`): resolves true once the requested block is known to be the fork's, false when
   * it is another (the source moved on); rejects as the requested block does. null: the fork is at the requested
   * block already.
   */
  readonly confirmed: Promise<boolean> | null;
  /** healthy: return the fork to the pool; otherwise kill it. Idempotent. */
  release(healthy: boolean): Promise<void>;
}

interface IdleFork {
  fork: ForkNode;
  timer: NodeJS.Timeout;
  /** its return to its snapshot, started when it was released (never rejects) */
  settled: Promise<void>;
}

/** A fork's block, its latest block there, and its unused snapshots (ascending: the last one is spent first). */
interface Pinned {
  block: bigint;
  latest: ForkBlock;
  snapshots: string[];
  /** already back at a snapshot (done when the last lease ended): the next lease at this block need not revert */
  pristine?: boolean;
}

export class ForkPool {
  private readonly idle = new Map<string, IdleFork[]>();
  private readonly inUse = new Set<ForkNode>();
  /**
   * the block a fork is pinned to, its latest block there, and the unused snapshots of its state there, taken
   * before its current lease (ascending: the last one is spent first)
   */
  private readonly pinned = new WeakMap<ForkNode, Pinned>();
  private closed = false;

  constructor(private readonly options: ForkPoolOptions) {}

  /** Forks alive in this pool, idle or in use. */
  size(): number {
    let n = this.inUse.size;
    for (const list of this.idle.values()) n += list.length;
    return n;
  }

  /**
   * A fork of `sourceUrl` at `block`, which may still be being read from the source: an idle fork meanwhile goes
   * back to its snapshot (right if the block is still the one it is pinned to, harmless before a full reset
   * otherwise). Rejects as `block` does, if it does.
   */
  async acquire(sourceUrl: string, block: bigint | null | Promise<bigint | null>, signal: AbortSignal, options: { early?: boolean } = {}): Promise<ForkLease> {
    if (this.closed) {
      if (block instanceof Promise) await block;
      throw new Error('the fork pool is closed');
    }
    for (let idle = this.takeIdle(sourceUrl); idle; idle = this.takeIdle(sourceUrl)) {
      const candidate = idle.fork;
      this.inUse.add(candidate);
      await idle.settled;
      if (options.early && block instanceof Promise) {
        const lease = await this.earlyLease(candidate, sourceUrl, block, signal);
        if (lease) return lease;
      }
      let reset: { blockNumber: bigint | null; ok: boolean };
      try {
        reset = await this.reset(candidate, sourceUrl, block, signal);
      } catch (err) {
        // the block could not be read
        this.inUse.delete(candidate);
        await candidate.kill();
        throw err;
      }
      if (reset.ok) return this.lease(candidate, sourceUrl, true, reset.blockNumber);
      this.inUse.delete(candidate);
      await candidate.kill();
      signal.throwIfAborted();
    }
    const blockNumber = await block;
    const fork = await startFork({ ...this.options.startOptions, sourceUrl, blockNumber, signal });
    if (this.closed) {
      await fork.kill();
      throw new Error('the fork pool is closed');
    }
    this.inUse.add(fork);
    if (blockNumber !== null) {
      try {
        await this.pin(fork, blockNumber, signal);
      } catch {
        // no snapshot: the next lease resets it
      }
    }
    return this.lease(fork, sourceUrl, false, blockNumber);
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

  private takeIdle(sourceUrl: string): IdleFork | null {
    const list = this.idle.get(sourceUrl);
    while (list && list.length > 0) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (entry.fork.alive()) return entry;
    }
    return null;
  }

  /**
   * Sends a fork just released back to a snapshot of its block, off the next lease's path (and takes new snapshots
   * once it has spent them); on any failure it forgets the fork's block, so that the next lease resets it.
   */
  private async restore(fork: ForkNode): Promise<void> {
    const pinned = this.pinned.get(fork);
    if (!pinned || pinned.pristine) return;
    const snapshot = pinned.snapshots.pop();
    if (snapshot === undefined) {
      this.pinned.delete(fork);
      return;
    }
    const signal = new AbortController().signal;
    try {
      if (!(await rpcCall<boolean>(fork.url, 'evm_revert', [snapshot], { timeoutMs: this.options.rpcTimeoutMs }))) throw new Error('no snapshot');
      if (pinned.snapshots.length === 0) await this.pin(fork, pinned.block, signal, pinned.latest);
      const now = this.pinned.get(fork);
      if (now) now.pristine = true;
    } catch {
      this.pinned.delete(fork);
    }
  }

  /**
   * A lease of a fork pinned to a block, back to its snapshot there, before the requested block is known; null when
   * the fork has no snapshot or could not go back to it (then it is reset the usual way).
   */
  private async earlyLease(fork: ForkNode, sourceUrl: string, block: Promise<bigint | null>, signal: AbortSignal): Promise<ForkLease | null> {
    const pinned = this.pinned.get(fork);
    if (!pinned) return null;
    if (pinned.pristine) {
      pinned.pristine = false;
    } else {
      const snapshot = pinned.snapshots.pop();
      if (snapshot === undefined) return null;
      const reverted = await rpcCall<boolean>(fork.url, 'evm_revert', [snapshot], { signal, timeoutMs: this.options.rpcTimeoutMs }).catch(() => false);
      if (!reverted) {
        this.pinned.delete(fork);
        return null;
      }
    }
    if (pinned.snapshots.length === 0) {
      try {
        await this.pin(fork, pinned.block, signal, pinned.latest);
      } catch {
        this.pinned.delete(fork); // no snapshot: the next lease resets it
      }
    }
    const confirmed = block.then((requested) => {
      const same = requested === pinned.block;
      // another block: the next lease must reset the fork rather than go back to a snapshot of this one
      if (!same && this.pinned.get(fork)?.block === pinned.block) this.pinned.delete(fork);
      return same;
    });
    confirmed.catch(() => undefined); // the lease's holder awaits it
    return this.lease(fork, sourceUrl, true, pinned.block, confirmed);
  }

  /** Brings the fork to `block`: back to its snapshot when still pinned there, else with `anvil_reset`. Rejects as `block` does. */
  private async reset(fork: ForkNode, sourceUrl: string, block: bigint | null | Promise<bigint | null>, signal: AbortSignal): Promise<{ blockNumber: bigint | null; ok: boolean }> {
    const pinned = this.pinned.get(fork);
    this.pinned.delete(fork);
    const opts = { signal, timeoutMs: this.options.rpcTimeoutMs };
    const pristine = pinned?.pristine === true;
    if (pinned) pinned.pristine = false;
    const snapshot = pristine ? undefined : pinned?.snapshots.pop();
    // sent before the block is known (see acquire); a failed revert is settled by a full reset below
    const reverted = pristine ? Promise.resolve(true) : snapshot === undefined ? Promise.resolve(false) : rpcCall<boolean>(fork.url, 'evm_revert', [snapshot], opts).catch(() => false);
    let blockNumber: bigint | null;
    try {
      blockNumber = await block;
    } finally {
      // no request to the fork may still be running when it is reset, leased or killed
      await reverted;
    }
    try {
      // still at the requested block: going back to a snapshot taken there is enough (no re-read of the source)
      if (pinned && blockNumber !== null && pinned.block === blockNumber && (await reverted)) {
        if (pinned.snapshots.length > 0) this.pinned.set(fork, pinned);
        else await this.pin(fork, blockNumber, signal, pinned.latest);
        return { blockNumber, ok: true };
      }
    } catch {
      // fall through to a full reset
    }
    try {
      const forking = blockNumber === null ? { jsonRpcUrl: sourceUrl } : { jsonRpcUrl: sourceUrl, blockNumber: Number(blockNumber) };
      await rpcCall(fork.url, 'anvil_reset', [{ forking }], { signal, timeoutMs: this.options.rpcTimeoutMs });
      if (blockNumber === null) return { blockNumber, ok: true };
      const latest = await this.pin(fork, blockNumber, signal);
      if (BigInt(latest.number) !== blockNumber) {
        this.pinned.delete(fork);
        return { blockNumber, ok: false };
      }
      return { blockNumber, ok: true };
    } catch {
      return { blockNumber, ok: false };
    }
  }

  /**
   * Takes snapshots of the fork's pristine state at `blockNumber` for the next leases at the same block, and
   * reads its latest block with them (unless already known); returns that block.
   */
  private async pin(fork: ForkNode, blockNumber: bigint, signal: AbortSignal, known?: ForkBlock): Promise<ForkBlock> {
    const calls: Array<[string, unknown[]]> = Array.from({ length: SPARE_SNAPSHOTS }, () => ['evm_snapshot', []]);
    if (!known) calls.unshift(['eth_getBlockByNumber', ['latest', false]]);
    // snapshots and the block read change nothing: they may run concurrently
    const answers = await rpcBatch(fork.url, calls, { signal, timeoutMs: this.options.rpcTimeoutMs });
    const failed = answers.find((a) => a instanceof RpcCallError);
    if (failed) throw failed;
    const latest = known ?? readBlock(answers.shift());
    const snapshots = (answers as string[]).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
    this.pinned.set(fork, { block: blockNumber, latest, snapshots });
    return latest;
  }

  private lease(fork: ForkNode, sourceUrl: string, reused: boolean, blockNumber: bigint | null, confirmed: Promise<boolean> | null = null): ForkLease {
    let released = false;
    const pinned = this.pinned.get(fork);
    return {
      fork,
      reused,
      confirmed,
      block: pinned && pinned.block === blockNumber ? { ...pinned.latest } : null,
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
        // back to its snapshot now, while it waits: the next lease finds it ready
        list.push({ fork, timer, settled: this.restore(fork) });
        this.idle.set(sourceUrl, list);
      },
    };
  }
}

function readBlock(answer: unknown): ForkBlock {
  const block = answer as Partial<ForkBlock> | null;
  if (!block || typeof block.number !== 'string' || typeof block.gasLimit !== 'string') throw new Error('the fork answered no latest block');
  return { number: block.number, gasLimit: block.gasLimit };
}
