/**
 * The event indexer of one chain: follows the settlement contract, the tracked ERC-20 tokens, the tracked
 * Uniswap-V2 pools (and pools created by an optional factory) and writes their events into the database,
 * one transaction per block range including the checkpoint, so a restart resumes exactly where it stopped.
 *
 * Reorgs: before each pass the stored hash of the checkpoint block is compared with the chain's; on a mismatch
 * the indexer walks back through the remembered headers (`indexed_blocks`, the last `reorgWindow` blocks) to
 * the common ancestor, deletes everything above it (reversing holder balances) and indexes again. Each range
 * is also checked to link to the checkpoint and to be internally consistent (log block hashes = headers).
 *
 * @example
 *   const indexer = new Indexer({ chainId, client, db, settlement, tokens: () => tokens, pools: () => pools, logger });
 *   indexer.onIndexed((from, to, touched) => auctions.refresh(touched.orderUids));
 *   void indexer.run(abort.signal);
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { domainSeparator } from '../../protocol/index.js';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { BlockFeed } from '../block-feed.js';
import type { ChainClient } from '../client.js';
import { backoffDelay } from '../rpc-retry.js';
import { fetchBlockHeader, fetchBlockHeaders, fetchHeadHeader } from './block-headers.js';
import {
  deleteCheckpoint,
  readCheckpoint,
  readSources,
  recentBlocks,
  rememberBlocks,
  rewindSources,
  sourceKey,
  writeCheckpoint,
  writeSources,
  type Checkpoint,
  type Source,
  type SourceKind,
} from './checkpoint-store.js';
import { touchedBy, type LogRoles, type Touched } from './decode-logs.js';
import { LogRangeTooLargeError } from './fetch-logs.js';
import { fetchRange, ReorgDetectedError, type FetchedRange } from './fetch-range.js';
import { readPairTokens } from './pair-tokens.js';
import { rewindAbove } from './rewind.js';
import { storeEvents } from './store-events.js';
import { sleep } from '../../infra/abortable-sleep.js';

export interface IndexerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface IndexerOptions {
  chainId: number;
  client: ChainClient;
  db: Kysely<DB>;
  /** GPv2Settlement address */
  settlement: Address;
  /** ERC-20 tokens whose transfers are indexed (read at every pass; new ones are back-filled) */
  tokens?: () => Address[] | Promise<Address[]>;
  /** Uniswap-V2 pairs whose Sync/Swap are indexed, besides every pool in `amm_pools` */
  pools?: () => Address[] | Promise<Address[]>;
  /** a Uniswap-V2 factory whose PairCreated events add pools */
  factory?: Address | null;
  /** eth-flow contracts whose OrderPlacement / OrderInvalidation / OrderRefund are indexed */
  ethFlows?: readonly Address[];
  logger: IndexerLogger;
  /** checkpoint name (default 'main'); one indexer per chain */
  name?: string;
  /** first block of a fresh start: a number, or 'head'. Default: 0 on the devnet (31337), the head elsewhere */
  startBlock?: number | 'head';
  /** blocks per eth_getLogs at most (default 2000; shrinks when the node refuses, grows back after) */
  blockRange?: number;
  /** addresses per eth_getLogs (default 500) */
  addressesPerCall?: number;
  /** recent block headers remembered for reorg detection (default 256) */
  reorgWindow?: number;
  /** index only blocks this deep below the head (default 0) */
  confirmations?: number;
  /** wait between passes when there is no block feed, and the longest wait with one (default 1000 ms) */
  pollingIntervalMs?: number;
  /** wakes the loop on every new block */
  blockFeed?: BlockFeed;
  multicallAddress?: Address;
}

export type IndexedListener = (fromBlock: number, toBlock: number, touched: Touched) => void | Promise<void>;

export interface ReorgEvent {
  /** the last block kept, or null when no common ancestor was found and everything was dropped */
  commonAncestor: number | null;
  /** the checkpoint before the rewind */
  previousCheckpoint: number;
  /** what the removed rows had touched */
  touched: Touched;
}
export type ReorgListener = (event: ReorgEvent) => void | Promise<void>;

export interface IndexerStats {
  checkpoint: number | null;
  /** the head seen by the last pass */
  head: number | null;
  ranges: number;
  blocks: number;
  logs: number;
  reorgs: number;
  /** time spent reading from the node and writing to the database, ms */
  fetchMs: number;
  writeMs: number;
  lastError: string | null;
}

interface Wanted {
  kind: SourceKind;
  address: Address;
}

const lower = (a: string): Address => a.toLowerCase() as Address;

export class Indexer {
  private readonly chainId: number;
  private readonly client: ChainClient;
  private readonly db: Kysely<DB>;
  private readonly logger: IndexerLogger;
  private readonly name: string;
  private readonly settlement: Address;
  private readonly factory: Address | null;
  private readonly maxRange: number;
  private readonly reorgWindow: number;
  private readonly confirmations: number;
  private readonly pollingIntervalMs: number;
  private readonly orderDomain: Hex;

  private range: number;
  /** the range the node last refused, less one; lifted again after many successful ranges */
  private rangeCeiling: number;
  private rangeSuccesses = 0;
  private loaded = false;
  private checkpoint: Checkpoint | null = null;
  private start: number | null = null;
  private readonly sources = new Map<string, Source>();
  /** pools that did not answer token0/token1 (not asked again) */
  private readonly undescribedPools = new Set<string>();
  /** sources to write with the next committed range */
  private unsaved: Source[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private readonly indexedListeners = new Set<IndexedListener>();
  private readonly reorgListeners = new Set<ReorgListener>();
  private readonly counters: IndexerStats = { checkpoint: null, head: null, ranges: 0, blocks: 0, logs: 0, reorgs: 0, fetchMs: 0, writeMs: 0, lastError: null };

  constructor(private readonly options: IndexerOptions) {
    this.chainId = options.chainId;
    this.client = options.client;
    this.db = options.db;
    this.logger = options.logger;
    this.name = options.name ?? 'main';
    this.settlement = lower(options.settlement);
    this.factory = options.factory ? lower(options.factory) : null;
    this.maxRange = Math.max(1, options.blockRange ?? 2000);
    this.range = this.maxRange;
    this.rangeCeiling = this.maxRange;
    this.reorgWindow = Math.max(2, options.reorgWindow ?? 256);
    this.confirmations = Math.max(0, options.confirmations ?? 0);
    this.pollingIntervalMs = options.pollingIntervalMs ?? 1_000;
    this.orderDomain = domainSeparator(options.chainId, options.settlement);
  }

  /** Called after every committed range (live or back-fill) with what it touched. Returns an unsubscribe. */
  onIndexed(listener: IndexedListener): () => void {
    this.indexedListeners.add(listener);
    return () => this.indexedListeners.delete(listener);
  }

  /** Called after a reorg was rewound (before re-indexing). Returns an unsubscribe. */
  onReorg(listener: ReorgListener): () => void {
    this.reorgListeners.add(listener);
    return () => this.reorgListeners.delete(listener);
  }

  get stats(): IndexerStats {
    return { ...this.counters, checkpoint: this.checkpoint?.number ?? null };
  }

  /** Indexes until the head, then follows it; errors are logged and retried with backoff. Resolves on abort. */
  async run(signal: AbortSignal): Promise<void> {
    let wake: (() => void) | null = null;
    let woken = false;
    const onBlock = (): void => {
      woken = true;
      wake?.();
    };
    const unsubscribe = this.options.blockFeed?.subscribe(onBlock, signal);
    let failures = 0;
    try {
      while (!signal.aborted) {
        let caughtUp = false;
        try {
          caughtUp = await this.exclusive(() => this.pass(null, signal));
          failures = 0;
          this.counters.lastError = null;
        } catch (error) {
          if (signal.aborted) break;
          this.counters.lastError = (error as Error).message ?? String(error);
          failures++;
          if (error instanceof ReorgDetectedError) {
            // the chain moved while a range was read (or a load-balanced node lags): look again shortly
            this.logger.info({ chainId: this.chainId, reason: this.counters.lastError }, 'indexer: chain changed during a range, checking again');
            await sleep(backoffDelay(failures, { baseDelayMs: 100, maxDelayMs: 5_000 }), signal);
            continue;
          }
          const delay = 500 + backoffDelay(failures, { baseDelayMs: 500, maxDelayMs: 30_000 });
          this.logger.warn({ chainId: this.chainId, err: error, failures, retryInMs: delay }, 'indexer: pass failed');
          await sleep(delay, signal);
          continue;
        }
        if (!caughtUp || signal.aborted) continue;
        if (!woken) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              signal.removeEventListener('abort', done);
              wake = null;
              resolve();
            };
            const timer = setTimeout(done, this.pollingIntervalMs);
            signal.addEventListener('abort', done, { once: true });
            wake = done;
          });
        }
        woken = false;
      }
    } finally {
      unsubscribe?.();
    }
  }

  /** Indexes up to `blockNumber` (or the head, if lower) and returns the checkpoint. For tests and tools. */
  async indexTo(blockNumber: number | bigint): Promise<number | null> {
    const target = Number(blockNumber);
    return this.exclusive(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          if (await this.pass(target)) return this.checkpoint?.number ?? null;
        } catch (error) {
          if (!(error instanceof ReorgDetectedError) || attempt >= 20) throw error;
          await new Promise((r) => setTimeout(r, backoffDelay(attempt, { baseDelayMs: 50, maxDelayMs: 1_000 })));
        }
        if (attempt >= 100) throw new Error(`indexTo(${target}): the chain kept changing`);
      }
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  private async load(): Promise<void> {
    if (this.loaded) return;
    this.checkpoint = await readCheckpoint(this.db, this.chainId, this.name);
    this.sources.clear();
    this.unsaved = [];
    const stored = await readSources(this.db, this.chainId, this.name);
    for (const s of stored) this.sources.set(sourceKey(s.kind, s.address), s);
    this.start = stored.length > 0 ? Math.min(...stored.map((s) => s.fromBlock)) : null;
    this.loaded = true;
  }

  /** One pass: reorg check, source changes and back-fill, then ranges up to the head. True when caught up. */
  private async pass(limit: number | null, signal?: AbortSignal): Promise<boolean> {
    await this.load();
    const chainHead = await fetchHeadHeader(this.client);
    let head = chainHead.number - this.confirmations;
    if (limit !== null) head = Math.min(head, limit);
    this.counters.head = chainHead.number;

    if (this.checkpoint) {
      const onChain = this.checkpoint.number === chainHead.number ? chainHead : await fetchBlockHeader(this.client, this.checkpoint.number);
      if (!onChain || onChain.hash !== this.checkpoint.hash) {
        await this.rewindReorg();
        return false;
      }
    }

    const wanted = await this.wantedSources();
    if (this.checkpoint) {
      await this.reconcileSources(wanted);
      await this.backfill(wanted, signal);
    } else {
      this.start ??= this.resolveStart(chainHead.number);
      this.unsaved = [...wanted.values()].map((w) => ({ ...w, fromBlock: this.start!, backfilledTo: null }));
      for (const s of this.unsaved) this.sources.set(sourceKey(s.kind, s.address), s);
    }

    let cursor = this.checkpoint?.number ?? this.start! - 1;
    while (cursor < head) {
      if (signal?.aborted) return false;
      cursor = await this.adaptive(cursor + 1, head, (from, to) => this.indexLiveRange(from, to, chainHead.number, wanted));
    }
    return true;
  }

  private resolveStart(chainHead: number): number {
    const configured = this.options.startBlock;
    if (typeof configured === 'number') return configured;
    if (configured === 'head') return chainHead;
    return this.chainId === 31337 ? 0 : chainHead;
  }

  /** Every contract that should be followed now: settlement, factory, tokens, pools (given and in amm_pools). */
  private async wantedSources(): Promise<Map<string, Wanted>> {
    const wanted = new Map<string, Wanted>();
    const add = (kind: SourceKind, address: string): void => {
      wanted.set(sourceKey(kind, address), { kind, address: lower(address) });
    };
    add('settlement', this.settlement);
    if (this.factory) add('factory', this.factory);
    for (const ethFlow of this.options.ethFlows ?? []) add('ethflow', ethFlow);
    for (const token of (await this.options.tokens?.()) ?? []) add('token', token);
    const given = ((await this.options.pools?.()) ?? []).map(lower);
    const rows = await this.db.selectFrom('amm_pools').select('address').where('chain_id', '=', this.chainId).execute();
    const known = new Set(rows.map((r) => toHex(r.address)));
    for (const pool of known) add('pool', pool);
    for (const pool of given) add('pool', pool);
    const missing = [...new Set(given.filter((p) => !known.has(p) && !this.undescribedPools.has(p)))];
    if (missing.length > 0) await this.describePools(missing);
    return wanted;
  }

  /** Fills amm_pools for pools given by the caller, reading token0/token1 from the chain. */
  private async describePools(pools: Address[]): Promise<void> {
    const tokens = await readPairTokens(this.client, pools, this.options.multicallAddress);
    const rows = [...tokens].map(([address, t]) => ({ chain_id: this.chainId, address: toBytes(address), token0: toBytes(t.token0), token1: toBytes(t.token1), factory: null, created_block: null }));
    if (rows.length > 0) await this.db.insertInto('amm_pools').values(rows).onConflict((oc) => oc.columns(['chain_id', 'address']).doNothing()).execute();
    for (const pool of pools) {
      if (tokens.has(pool)) continue;
      this.undescribedPools.add(pool);
      this.logger.warn({ chainId: this.chainId, pool }, 'indexer: pool does not answer token0/token1; indexing its events anyway');
    }
  }

  /** Pauses contracts no longer wanted, registers new ones for back-fill, marks caught-up ones live. */
  private async reconcileSources(wanted: Map<string, Wanted>): Promise<void> {
    const checkpoint = this.checkpoint!.number;
    const start = this.start ?? checkpoint + 1;
    const changes: Source[] = [];
    for (const [key, source] of this.sources) {
      if (!wanted.has(key) && source.backfilledTo === null) changes.push({ ...source, backfilledTo: checkpoint });
      else if (wanted.has(key) && source.backfilledTo !== null && source.backfilledTo >= checkpoint) changes.push({ ...source, backfilledTo: null });
    }
    for (const [key, w] of wanted) {
      if (!this.sources.has(key)) changes.push({ ...w, fromBlock: start, backfilledTo: start - 1 });
    }
    if (changes.length === 0) return;
    await writeSources(this.db, this.chainId, this.name, changes);
    for (const s of changes) this.sources.set(sourceKey(s.kind, s.address), s);
  }

  /** Brings every wanted contract that lags the checkpoint up to it, the furthest behind first. */
  private async backfill(wanted: Map<string, Wanted>, signal?: AbortSignal): Promise<void> {
    const checkpoint = this.checkpoint!.number;
    for (;;) {
      if (signal?.aborted) return;
      const lagging = [...this.sources.entries()].filter(([key, s]) => wanted.has(key) && s.backfilledTo !== null && s.backfilledTo < checkpoint).map(([, s]) => s);
      if (lagging.length === 0) return;
      const low = Math.min(...lagging.map((s) => s.backfilledTo!));
      const group = lagging.filter((s) => s.backfilledTo === low);
      this.logger.info({ chainId: this.chainId, contracts: group.length, fromBlock: low + 1, toBlock: checkpoint }, 'indexer: back-filling');
      await this.adaptive(low + 1, checkpoint, (from, to) => this.indexBackfillRange(from, to, group, checkpoint));
    }
  }

  /** Runs `fn` on [from, to'] with to' ≤ maxTo, shrinking the range while the node refuses it. */
  private async adaptive(from: number, maxTo: number, fn: (from: number, to: number) => Promise<void>): Promise<number> {
    for (;;) {
      const to = Math.min(maxTo, from + this.range - 1);
      try {
        await fn(from, to);
        if (++this.rangeSuccesses >= 50) {
          this.rangeCeiling = this.maxRange;
          this.rangeSuccesses = 0;
        }
        if (this.range < this.rangeCeiling) this.range = Math.min(this.rangeCeiling, this.range * 2);
        return to;
      } catch (error) {
        if (!(error instanceof LogRangeTooLargeError) || to === from) throw error;
        const suggested = error.suggestedToBlock !== null && error.suggestedToBlock >= from && error.suggestedToBlock < to ? error.suggestedToBlock - from + 1 : null;
        this.range = Math.max(1, suggested ?? Math.floor((to - from + 1) / 2));
        this.rangeCeiling = Math.max(1, Math.min(this.rangeCeiling, to - from));
        this.rangeSuccesses = 0;
        this.logger.info({ chainId: this.chainId, fromBlock: from, blocks: this.range }, 'indexer: node refused the range, shrinking it');
      }
    }
  }

  private rolesOf(sources: Iterable<{ kind: SourceKind; address: Address }>): LogRoles {
    const roles = { settlement: '', tokens: new Set<string>(), pools: new Set<string>(), factories: new Set<string>(), ethFlows: new Set<string>(), orderDomain: this.orderDomain };
    for (const s of sources) {
      if (s.kind === 'settlement') roles.settlement = s.address;
      else if (s.kind === 'ethflow') roles.ethFlows.add(s.address);
      else if (s.kind === 'token') roles.tokens.add(s.address);
      else if (s.kind === 'pool') roles.pools.add(s.address);
      else roles.factories.add(s.address);
    }
    return roles;
  }

  private newPoolSources(fetched: FetchedRange, backfilledTo: number | null): Source[] {
    return fetched.newPairs.map((p) => ({ kind: 'pool', address: p.pair, fromBlock: p.blockNumber, backfilledTo }));
  }

  private timestamps(fetched: FetchedRange): Map<number, number> {
    return new Map([...fetched.headers].map(([n, h]) => [n, h.timestamp]));
  }

  private async indexLiveRange(fromBlock: number, toBlock: number, chainHead: number, wanted: Map<string, Wanted>): Promise<void> {
    const live = [...this.sources.entries()].filter(([key, s]) => wanted.has(key) && s.backfilledTo === null).map(([, s]) => s);
    const fetchStarted = performance.now();
    const fetched = await fetchRange(this.client, {
      fromBlock,
      toBlock,
      head: chainHead,
      reorgWindow: this.reorgWindow,
      parent: this.checkpoint,
      roles: this.rolesOf(live),
      addressesPerCall: this.options.addressesPerCall,
    });
    const last = fetched.headers.get(toBlock)!;
    const checkpoint: Checkpoint = { number: toBlock, hash: last.hash };
    const newSources = [...this.unsaved, ...this.newPoolSources(fetched, null)];
    const writeStarted = performance.now();
    this.counters.fetchMs += writeStarted - fetchStarted;
    await this.db.transaction().execute(async (trx) => {
      await storeEvents(trx, this.chainId, fetched.events, this.timestamps(fetched));
      await writeSources(trx, this.chainId, this.name, newSources);
      await rememberBlocks(trx, this.chainId, fetched.recentHeaders, toBlock - this.reorgWindow + 1);
      await writeCheckpoint(trx, this.chainId, this.name, checkpoint);
    });
    this.counters.writeMs += performance.now() - writeStarted;
    this.unsaved = [];
    for (const s of newSources) this.sources.set(sourceKey(s.kind, s.address), s);
    this.checkpoint = checkpoint;
    this.committed(fromBlock, toBlock, fetched);
  }

  private async indexBackfillRange(fromBlock: number, toBlock: number, group: Source[], checkpoint: number): Promise<void> {
    const fetchStarted = performance.now();
    const fetched = await fetchRange(this.client, {
      fromBlock,
      toBlock,
      head: checkpoint,
      reorgWindow: 0,
      parent: null,
      roles: this.rolesOf(group),
      addressesPerCall: this.options.addressesPerCall,
    });
    const done = toBlock >= checkpoint ? null : toBlock;
    const updated = [...group.map((s) => ({ ...s, backfilledTo: done })), ...this.newPoolSources(fetched, done)];
    const writeStarted = performance.now();
    this.counters.fetchMs += writeStarted - fetchStarted;
    await this.db.transaction().execute(async (trx) => {
      await storeEvents(trx, this.chainId, fetched.events, this.timestamps(fetched));
      await writeSources(trx, this.chainId, this.name, updated);
    });
    this.counters.writeMs += performance.now() - writeStarted;
    for (const s of updated) this.sources.set(sourceKey(s.kind, s.address), s);
    this.committed(fromBlock, toBlock, fetched);
  }

  private committed(fromBlock: number, toBlock: number, fetched: FetchedRange): void {
    this.counters.ranges++;
    this.counters.blocks += toBlock - fromBlock + 1;
    this.counters.logs += fetched.logCount;
    if (fetched.skipped > 0) this.logger.debug({ chainId: this.chainId, skipped: fetched.skipped, fromBlock, toBlock }, 'indexer: skipped undecodable logs');
    const touched = touchedBy(fetched.events);
    for (const listener of this.indexedListeners) this.notify(() => listener(fromBlock, toBlock, touched));
  }

  private notify(call: () => void | Promise<void>): void {
    try {
      const result = call();
      if (result && typeof (result as Promise<void>).catch === 'function') {
        (result as Promise<void>).catch((err) => this.logger.warn({ chainId: this.chainId, err }, 'indexer: listener failed'));
      }
    } catch (err) {
      this.logger.warn({ chainId: this.chainId, err }, 'indexer: listener failed');
    }
  }

  /** The checkpoint block is no longer on the chain: find the common ancestor and delete everything above. */
  private async rewindReorg(): Promise<void> {
    const previous = this.checkpoint!;
    const remembered = await recentBlocks(this.db, this.chainId, previous.number, this.reorgWindow);
    let ancestor: Checkpoint | null = null;
    for (let i = 0; i < remembered.length && !ancestor; i += 32) {
      const group = remembered.slice(i, i + 32);
      const onChain = await fetchBlockHeaders(this.client, group.map((b) => b.number));
      ancestor = group.find((b) => onChain.get(b.number)?.hash === b.hash) ?? null;
    }
    const keep = ancestor ? ancestor.number : (this.start ?? 0) - 1;
    const touched = await this.db.transaction().execute(async (trx) => {
      const { touched, removedPools } = await rewindAbove(trx, this.chainId, keep);
      await rewindSources(trx, this.chainId, this.name, keep, removedPools);
      if (ancestor) await writeCheckpoint(trx, this.chainId, this.name, ancestor);
      else {
        // nothing in common within the window (a deep reorg or a reset chain): start over from the first block
        await deleteCheckpoint(trx, this.chainId, this.name);
        await sql`delete from indexed_blocks where chain_id = ${this.chainId}`.execute(trx);
      }
      return touched;
    });
    this.counters.reorgs++;
    const log = ancestor ? this.logger.warn.bind(this.logger) : this.logger.error.bind(this.logger);
    log(
      { chainId: this.chainId, previousCheckpoint: previous.number, commonAncestor: ancestor?.number ?? null },
      ancestor ? 'indexer: reorg, rewound to the common ancestor' : 'indexer: no common ancestor within the reorg window, re-indexing from the first block',
    );
    this.loaded = false;
    await this.load();
    const event: ReorgEvent = { commonAncestor: ancestor?.number ?? null, previousCheckpoint: previous.number, touched };
    for (const listener of this.reorgListeners) this.notify(() => listener(event));
  }
}
