/**
 * Live balances and vault-relayer allowances for every watcher of one chain (the service behind the SSE route).
 *
 * - A registry user → watchers → tokens. Watchers of one user share tracking: each (user, token) pair is held
 *   once, reference-counted by the token lists that want it; each watcher is told only about its own tokens.
 *   Watchers of one user with the same token list share one token group (several tabs of one wallet cost a
 *   few dozen bytes each, not a copy of the list).
 * - One block subscription (the chain's BlockFeed), not a timer per user: on each new head, only the pairs the
 *   new block(s) can have changed are read — the (user, token) pairs named by the Transfer/Approval (to the vault
 *   relayer)/Deposit/Withdrawal logs of the watched tokens since the last consistent block (one eth_getLogs), plus
 *   the native balance of every watched user (gas and plain transfers leave no log) — in one chunked Multicall3
 *   read pinned to that block, diffed against the last values, and only the watchers whose values changed are
 *   notified — once per block, however many of their tokens changed. Every tracked pair is read instead (a full
 *   round) after a reorg (the head does not extend the last block), a gap of more than MAX_LOG_RANGE blocks, a
 *   failed log read, or with a reader that cannot read logs. Tokens that move balances without events (rebasing
 *   tokens) are only seen by full rounds.
 *   Rounds never overlap; if the chain moves on during a slow read, the next round reads the newest head.
 * - New pairs get one initial read (batched across watchers connecting at the same moment); a watcher is
 *   returned only once its values are known, so the first message never waits for a block and an RPC failure
 *   is reported to the caller instead of leaving an empty stream.
 * - A pair is dropped as soon as its last watcher leaves; the block subscription stops with the last user.
 * - With `replicas` (Redis), the block reads are shared across processes: see replica-sync.ts.
 *
 * Notifications are a pull model: `onChange()` says "something of yours changed"; the watcher reads the current
 * values when it is ready to write, so a slow consumer naturally coalesces to the latest state.
 *
 * @example
 *   const stream = new BalanceStream({ chainId: 1, reader, vaultRelayer });
 *   const watch = await stream.watch({ user, tokens, onChange: () => send(watch.value(token)) });
 *   watch.close();
 */
import type { Address } from 'viem';
import type { BlockHead } from '../../chain/block-feed.js';
import type { OwnerToken } from '../../chain/reader.js';
import { NATIVE_TOKEN, type TokenValues } from './balance-entry.js';
import { MulticallPairReader, type ChainReaderLike, type PairReader } from './pair-multicall.js';

export type { PairReader } from './pair-multicall.js';
import { ReplicaSync, type ReplicaOptions, type SharedValue } from './replica-sync.js';


export interface StreamLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ChainReadEvent {
  /** block: a per-block round (local, or as the replicas' leader); connect: initial values of new pairs; resync: after missed messages */
  kind: 'block' | 'connect' | 'resync';
  /** a block round that read only the pairs the block's logs (and native balances) named */
  delta?: boolean;
  block: bigint;
  pairs: number;
  ok: boolean;
  ms: number;
}

export interface BalanceStreamOptions {
  chainId: number;
  /** a ChainReader (its reads then go through the hand-encoded MulticallPairReader), or any PairReader */
  reader: PairReader;
  /** the spender of the reported allowance */
  vaultRelayer: Address;
  /** share per-block reads with other replicas (Redis); omitted: this process reads what it watches */
  replicas?: ReplicaOptions | null;
  logger?: StreamLogger;
  /** observes every chain read (instrumentation, tests, the bench) */
  onRead?: (event: ChainReadEvent) => void;
  /** aborting closes the stream (graceful shutdown) */
  signal?: AbortSignal;
}

export interface WatchRequest {
  user: Address;
  /** lowercase, distinct */
  tokens: readonly Address[];
  /** one of this watcher's values changed (at most once per round); read them with `value()` */
  onChange: () => void;
  /** the stream is shutting down; the watcher is already detached */
  onClose?: () => void;
}

export interface BalanceWatch {
  readonly id: number;
  readonly user: Address;
  readonly tokens: readonly Address[];
  /** the current values of one of this watcher's tokens */
  value(token: Address): TokenValues | undefined;
  readonly closed: boolean;
  /** stop watching (idempotent); the user's tracking ends with its last watcher */
  close(): void;
}

export class StreamClosedError extends Error {
  constructor() {
    super('the balance stream is shut down');
    this.name = 'StreamClosedError';
  }
}

export interface BalanceStreamStats {
  users: number;
  watchers: number;
  pairs: number;
  blockReads: number;
  connectReads: number;
  resyncReads: number;
  readFailures: number;
  /** number of the last block whose round finished */
  lastBlock: bigint | null;
  rounds: { local: number; leader: number; follower: number };
}

interface PairState {
  key: string;
  user: Address;
  token: Address;
  refs: number;
  known: boolean;
  balance: bigint | null;
  allowance: bigint | null;
  /** the block the value was read at: an older read never overwrites a newer one */
  block: bigint;
  /** the initial read in flight, if any */
  loading: Promise<void> | null;
}

/** One distinct token list of a user, shared by the watchers that asked for exactly it. */
interface TokenGroup {
  key: string;
  tokens: readonly Address[];
  tokenSet: ReadonlySet<Address>;
  pairs: readonly PairState[];
  watchers: number;
}

interface UserState {
  watchers: Set<Watcher>;
  groups: Map<string, TokenGroup>;
}

class Watcher implements BalanceWatch {
  ready = false;
  closed = false;

  constructor(
    readonly id: number,
    readonly user: Address,
    readonly group: TokenGroup,
    readonly onChange: () => void,
    readonly onClose: (() => void) | undefined,
    private readonly owner: BalanceStream,
  ) {}

  get tokens(): readonly Address[] {
    return this.group.tokens;
  }

  value(token: Address): TokenValues | undefined {
    return this.owner.valueOf(this.user, token);
  }

  close(): void {
    this.owner.release(this);
  }
}

export const pairKey = (user: Address, token: Address): string => `${user}:${token}`;

function parsePairKey(key: string): OwnerToken {
  const [owner, token] = key.split(':');
  return { owner: owner as Address, token: token as Address };
}

/** A head further than this many blocks past the last consistent one gets a full round instead of a log range. */
export const MAX_LOG_RANGE = 64n;

/** Log an ongoing failure at most this often. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export class BalanceStream {
  readonly chainId: number;
  private readonly reader: PairReader;
  private readonly spender: Address;
  private readonly logger?: StreamLogger;
  private readonly onRead?: (event: ChainReadEvent) => void;
  private readonly pairs = new Map<string, PairState>();
  private readonly users = new Map<Address, UserState>();
  private readonly sync: ReplicaSync | null;
  private nextId = 1;
  private stopBlocks: (() => void) | null = null;
  private latest: BlockHead | null = null;
  /** the last block whose round read every pair that could have changed (the base of the next log range) */
  private consistent: BlockHead | null = null;
  private handledHash: string | null = null;
  private roundRunning = false;
  private resyncPending = false;
  private batch: { pairs: PairState[]; promise: Promise<void> } | null = null;
  private closed = false;
  private failingSince: number | null = null;
  private lastFailureLog = 0;
  private readonly counters = { blockReads: 0, connectReads: 0, resyncReads: 0, readFailures: 0, local: 0, leader: 0, follower: 0 };
  private lastBlock: bigint | null = null;

  constructor(options: BalanceStreamOptions) {
    this.chainId = options.chainId;
    const given = options.reader as PairReader & Partial<ChainReaderLike>;
    this.reader = given.client && typeof given.client.request === 'function' ? new MulticallPairReader(given as PairReader & ChainReaderLike) : given;
    this.spender = options.vaultRelayer.toLowerCase() as Address;
    this.logger = options.logger;
    this.onRead = options.onRead;
    this.sync = options.replicas
      ? new ReplicaSync(options.chainId, options.replicas, {
          localKeys: () => [...this.pairs.keys()],
          read: (keys, block) => this.readKeys(keys, block, 'block'),
          apply: (values, block) => this.applyShared(values, block),
          resync: () => {
            this.resyncPending = true;
            this.kick();
          },
        }, options.logger)
      : null;
    if (options.signal?.aborted) this.closed = true;
    options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  /** The replica id when reads are shared across replicas. */
  get replicaId(): string | null {
    return this.sync?.replicaId ?? null;
  }

  /**
   * Starts watching `tokens` of `user`. Resolves once every value is known (reading the missing ones), rejects
   * if that read fails (nothing stays registered) or the stream is closed.
   */
  async watch(request: WatchRequest): Promise<BalanceWatch> {
    if (this.closed) throw new StreamClosedError();
    const user = request.user.toLowerCase() as Address;
    let state = this.users.get(user);
    if (!state) this.users.set(user, (state = { watchers: new Set(), groups: new Map() }));
    const group = this.groupFor(user, state, request.tokens);
    const watcher = new Watcher(this.nextId++, user, group, request.onChange, request.onClose, this);
    group.watchers++;
    state.watchers.add(watcher);
    this.startBlocks();

    const waits = new Set<Promise<void>>();
    const toLoad: PairState[] = [];
    for (const pair of group.pairs) {
      if (pair.known) continue;
      if (pair.loading) waits.add(pair.loading);
      else toLoad.push(pair);
    }
    if (toLoad.length > 0) waits.add(this.load(toLoad));
    try {
      await Promise.all(waits);
    } catch (err) {
      this.release(watcher);
      throw err;
    }
    if (this.closed) throw new StreamClosedError();
    watcher.ready = true;
    return watcher;
  }

  /** The user's group for this token list, created (and its pairs registered) on first use. */
  private groupFor(user: Address, state: UserState, requested: readonly Address[]): TokenGroup {
    const tokens = [...new Set(requested.map((t) => t.toLowerCase() as Address))];
    const key = tokens.join(',');
    const existing = state.groups.get(key);
    if (existing) return existing;
    const added: string[] = [];
    const pairs = tokens.map((token) => {
      const k = pairKey(user, token);
      let pair = this.pairs.get(k);
      if (!pair) {
        pair = { key: k, user, token, refs: 0, known: false, balance: null, allowance: null, block: -1n, loading: null };
        this.pairs.set(k, pair);
        added.push(k);
      }
      pair.refs++;
      return pair;
    });
    const group: TokenGroup = { key, tokens, tokenSet: new Set(tokens), pairs, watchers: 0 };
    state.groups.set(key, group);
    if (added.length > 0) this.sync?.pairsAdded(added);
    return group;
  }

  /** The current values of a tracked pair (what `BalanceWatch.value` answers). */
  valueOf(user: Address, token: Address): TokenValues | undefined {
    const pair = this.pairs.get(pairKey(user, token.toLowerCase() as Address));
    return pair?.known ? { balance: pair.balance, allowance: pair.allowance } : undefined;
  }

  /** Tokens tracked for `user` (the union over its watchers), or null when the user is not tracked. */
  trackedTokens(user: Address): Address[] | null {
    const state = this.users.get(user.toLowerCase() as Address);
    if (!state) return null;
    const tokens = new Set<Address>();
    for (const group of state.groups.values()) for (const t of group.tokens) tokens.add(t);
    return [...tokens];
  }

  stats(): BalanceStreamStats {
    let watchers = 0;
    for (const state of this.users.values()) watchers += state.watchers.size;
    const c = this.counters;
    return {
      users: this.users.size,
      watchers,
      pairs: this.pairs.size,
      blockReads: c.blockReads,
      connectReads: c.connectReads,
      resyncReads: c.resyncReads,
      readFailures: c.readFailures,
      lastBlock: this.lastBlock,
      rounds: { local: c.local, leader: c.leader, follower: c.follower },
    };
  }

  /** Detaches every watcher (telling each through `onClose`), stops the block subscription and leaves the replicas. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopBlocks?.();
    this.stopBlocks = null;
    const all = [...this.users.values()].flatMap((state) => [...state.watchers]);
    this.users.clear();
    this.pairs.clear();
    for (const w of all) {
      w.closed = true;
      try {
        w.onClose?.();
      } catch (err) {
        this.logger?.warn({ err }, 'balance stream: onClose handler failed');
      }
    }
    await this.sync?.close();
  }

  // ---- registry --------------------------------------------------------------------------------------------

  /** Detaches a watcher (what `BalanceWatch.close` does); idempotent. */
  release(watcher: BalanceWatch): void {
    if (!(watcher instanceof Watcher) || watcher.closed) return;
    watcher.closed = true;
    if (this.closed) return;
    const state = this.users.get(watcher.user);
    if (!state?.watchers.delete(watcher)) return;
    const group = watcher.group;
    if (--group.watchers === 0) {
      state.groups.delete(group.key);
      const removed: string[] = [];
      for (const pair of group.pairs) {
        if (--pair.refs > 0) continue;
        if (this.pairs.get(pair.key) === pair) this.pairs.delete(pair.key);
        removed.push(pair.key);
      }
      if (removed.length > 0) this.sync?.pairsRemoved(removed);
    }
    if (state.watchers.size === 0) this.users.delete(watcher.user);
    if (this.users.size === 0) this.stopBlocksNow();
  }

  private startBlocks(): void {
    if (this.stopBlocks || this.closed) return;
    this.handledHash = null;
    this.stopBlocks = this.reader.onBlock((block) => this.onBlock(block));
    this.sync?.activate();
  }

  private stopBlocksNow(): void {
    this.stopBlocks?.();
    this.stopBlocks = null;
    // the head we knew goes stale while idle: the next initial read asks the node for the current block
    this.latest = null;
    this.consistent = null;
    this.sync?.deactivate();
  }

  // ---- initial reads ---------------------------------------------------------------------------------------

  /** Queues pairs for the next initial read; all watchers connecting in the same tick share one multicall. */
  private load(pairs: PairState[]): Promise<void> {
    let batch = this.batch;
    if (!batch) {
      const b: { pairs: PairState[]; promise: Promise<void> } = { pairs: [], promise: Promise.resolve() };
      b.promise = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        if (this.batch === b) this.batch = null;
        try {
          await this.readInitial(b.pairs);
        } finally {
          for (const p of b.pairs) if (p.loading === b.promise) p.loading = null;
        }
      });
      b.promise.catch(() => {}); // awaited by the watchers
      this.batch = batch = b;
    }
    for (const p of pairs) {
      batch.pairs.push(p);
      p.loading = batch.promise;
    }
    return batch.promise;
  }

  private async readInitial(batch: PairState[]): Promise<void> {
    const pairs = batch.filter((p) => this.pairs.get(p.key) === p && !p.known);
    if (pairs.length === 0) return;
    const block = this.latest?.number ?? (await this.reader.blockNumber());
    const values = await this.readKeys(pairs.map((p) => p.key), block, 'connect');
    const changed: PairState[] = [];
    pairs.forEach((p, i) => {
      if (this.pairs.get(p.key) === p && this.apply(p, values[i], block)) changed.push(p);
    });
    this.notify(changed);
    // read outside the shared flow: make the replicas' next leader publish these pairs again
    this.sync?.invalidate(pairs.map((p) => p.key));
  }

  // ---- per-block rounds ------------------------------------------------------------------------------------

  private onBlock(block: BlockHead): void {
    if (this.closed) return;
    this.latest = block;
    this.kick();
  }

  private kick(): void {
    if (this.roundRunning || this.closed) return;
    void this.runRounds();
  }

  private async runRounds(): Promise<void> {
    this.roundRunning = true;
    try {
      while (!this.closed && this.latest && this.pairs.size > 0) {
        const block = this.latest;
        const resync = this.resyncPending;
        if (!resync && block.hash === this.handledHash) break;
        this.resyncPending = false;
        this.handledHash = block.hash;
        if (resync) await this.localRound(block, 'resync');
        else await this.blockRound(block);
        this.lastBlock = block.number;
      }
    } catch (err) {
      this.logger?.warn({ err, chainId: this.chainId }, 'balance stream: round failed');
    } finally {
      this.roundRunning = false;
    }
  }

  private async blockRound(block: BlockHead): Promise<void> {
    if (!this.sync) {
      this.counters.local++;
      await this.localRound(block, 'block');
      return;
    }
    const mode = await this.sync.round(block);
    this.counters[mode]++;
    if (mode === 'local') await this.localRound(block, 'block');
  }

  private async localRound(block: BlockHead, kind: 'block' | 'resync'): Promise<void> {
    const delta = kind === 'block' && !this.sync ? await this.deltaPairs(block) : null;
    const list = delta ?? [...this.pairs.values()];
    if (this.pairs.size === 0) return;
    let values: TokenValues[];
    try {
      // a delta round with nothing to read still reports itself (its one chain read was the logs)
      values = await this.readKeys(list.map((p) => p.key), block.number, kind, delta !== null);
    } catch {
      return; // logged by readKeys; the next block tries again (from the same consistent block)
    }
    if (!this.sync) this.consistent = block;
    const changed: PairState[] = [];
    list.forEach((p, i) => {
      if (this.pairs.get(p.key) === p && this.apply(p, values[i], block.number)) changed.push(p);
    });
    this.notify(changed);
    this.sync?.invalidate(list.map((p) => p.key));
  }

  /**
   * The tracked pairs blocks (consistent, head] can have changed, from their logs, plus every native pair; null
   * when a full round is due (no consistent block, reorg, long gap, no log reader, failed log read).
   */
  private async deltaPairs(head: BlockHead): Promise<PairState[] | null> {
    const base = this.consistent;
    const reader = this.reader;
    if (!base || !reader.changedPairs || head.number <= base.number || head.number - base.number > MAX_LOG_RANGE) return null;
    if (head.number === base.number + 1n && head.parentHash !== base.hash) return null; // the block we read was replaced
    const tokens = new Set<Address>();
    const out: PairState[] = [];
    for (const pair of this.pairs.values()) {
      if (pair.token === NATIVE_TOKEN) out.push(pair);
      else tokens.add(pair.token);
    }
    let changed: OwnerToken[];
    try {
      changed = await reader.changedPairs([...tokens], this.spender, base.number + 1n, head.number);
    } catch (err) {
      this.logger?.warn({ err, chainId: this.chainId }, 'balance stream: log read failed; reading every pair');
      return null;
    }
    for (const { owner, token } of changed) {
      const pair = this.pairs.get(pairKey(owner.toLowerCase() as Address, token.toLowerCase() as Address));
      if (pair) out.push(pair);
    }
    return out;
  }

  /** One chunked multicall for the pairs, pinned to `block`. Rejects on a transport failure. */
  private async readKeys(keys: readonly string[], block: bigint, kind: ChainReadEvent['kind'], delta = false): Promise<TokenValues[]> {
    const started = performance.now();
    try {
      const results = await this.reader.balancesAndAllowances(keys.map(parsePairKey), this.spender, { blockNumber: block });
      this.counters[kind === 'block' ? 'blockReads' : kind === 'connect' ? 'connectReads' : 'resyncReads']++;
      this.onRead?.({ kind, block, pairs: keys.length, ok: true, ms: performance.now() - started, ...(delta ? { delta } : {}) });
      if (this.failingSince !== null) {
        this.logger?.info({ chainId: this.chainId, failedForMs: Date.now() - this.failingSince }, 'balance stream: chain reads recovered');
        this.failingSince = null;
      }
      return results.map((r) => ({ balance: r.balance, allowance: r.allowance }));
    } catch (err) {
      this.counters.readFailures++;
      this.onRead?.({ kind, block, pairs: keys.length, ok: false, ms: performance.now() - started });
      const now = Date.now();
      if (this.failingSince === null) this.failingSince = now;
      if (now - this.lastFailureLog >= FAILURE_LOG_INTERVAL_MS) {
        this.lastFailureLog = now;
        this.logger?.warn({ err, chainId: this.chainId, kind, pairs: keys.length }, 'balance stream: chain read failed');
      }
      throw err;
    }
  }

  /** Values published by the replicas' leader: applied to the pairs watched here. */
  private applyShared(values: readonly SharedValue[], block: bigint): void {
    const changed: PairState[] = [];
    for (const [key, balance, allowance] of values) {
      const pair = this.pairs.get(key);
      if (pair && this.apply(pair, { balance, allowance }, block)) changed.push(pair);
    }
    this.notify(changed);
  }

  /** True when the value changed (or became known). A value read at an older block is ignored. */
  private apply(pair: PairState, value: TokenValues, block: bigint): boolean {
    if (pair.known && block < pair.block) return false;
    const changed = !pair.known || pair.balance !== value.balance || pair.allowance !== value.allowance;
    pair.balance = value.balance;
    pair.allowance = value.allowance;
    pair.block = block;
    pair.known = true;
    return changed;
  }

  private notify(changed: readonly PairState[]): void {
    if (changed.length === 0) return;
    const targets = new Set<Watcher>();
    for (const pair of changed) {
      const state = this.users.get(pair.user);
      if (!state) continue;
      for (const w of state.watchers) {
        if (w.ready && !w.closed && w.group.tokenSet.has(pair.token)) targets.add(w);
      }
    }
    for (const w of targets) {
      try {
        w.onChange();
      } catch (err) {
        this.logger?.warn({ err }, 'balance stream: onChange handler failed');
      }
    }
  }
}
