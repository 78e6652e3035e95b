/**
 * Shares the per-block balance reads of one chain across replicas, so that each (user, token) pair is read
 * once per block in the whole deployment, not once per replica.
 *
 * Protocol (keys relative to the coordination namespace, `B` = `balances:<chainId>`):
 * - Registration: each active replica keeps its watched pairs in the set `B:pairs:<replica>` (TTL, refreshed
 *   by a heartbeat that also announces it in the presence group `B:replicas`). A replica that dies simply
 *   expires: its pairs stop being read after at most three heartbeats.
 * - Per block: every active replica tries `claim(B:lead:<number>:<hash>)`; the single winner reads the union
 *   of all live replicas' pairs (plus its own) in one multicall, compares with the last published values
 *   (hash `B:values`), publishes the changed ones on `B:changes` (chunked; the last chunk is marked `done`),
 *   then records them. Everybody applies the messages to its own watchers; the block number in each message
 *   keeps an older read from overwriting a newer value.
 * - Values read outside this flow (a new watcher's initial read, a local fallback round) are invalidated in
 *   `B:values`, so the next leader publishes them again and every replica converges on the chain's state.
 *   Publishing happens before recording, so a failure between the two re-publishes rather than loses a change.
 * - Degraded modes (never a crash): Redis unreachable → the claim rejects → this replica reads its own pairs
 *   (a local round) and re-registers everything once Redis is back; subscription interrupted → local rounds
 *   until it is live again, then one resync read; no leader round seen for `leaderGraceBlocks` blocks (a leader
 *   that died mid-round, or whose RPC fails) → local rounds; a replica whose own reads fail stops claiming for
 *   a while so that a healthy one leads.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { BlockHead } from '../../chain/block-feed.js';
import type { Coordination } from '../../infra/coordination.js';
import type { PubSub, Subscription } from '../../infra/pubsub.js';
import type { TokenValues } from './balance-entry.js';

export interface ReplicaOptions {
  coordination: Coordination;
  pubsub: PubSub;
  /** unique per process (default `<host>:<pid>:<random>`) */
  replicaId?: string;
  /** presence and registration heartbeat (default 5000 ms); a replica expires after three missed beats */
  heartbeatMs?: number;
  /** read locally when no leader round was seen for this many blocks (default 3) */
  leaderGraceBlocks?: number;
}

/** [pair key, balance, allowance] */
export type SharedValue = readonly [key: string, balance: bigint | null, allowance: bigint | null];

export interface ReplicaHost {
  /** the pair keys watched here */
  localKeys(): string[];
  /** one chunked chain read at `block` (counted as a block read); rejects on a transport failure */
  read(keys: readonly string[], block: bigint): Promise<TokenValues[]>;
  /** values from the shared flow, applied to the pairs watched here */
  apply(values: readonly SharedValue[], block: bigint): void;
  /** messages may have been missed: re-read every local pair */
  resync(): void;
}

interface ReplicaLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

interface ChangeMessage {
  from: string;
  block: string;
  pairs: Array<[string, string | null, string | null]>;
  done?: boolean;
}

export type RoundMode = 'leader' | 'follower' | 'local';

const CLAIM_TTL_MS = 60_000;
const VALUES_TTL_MS = 60 * 60_000;
const PAIRS_PER_MESSAGE = 2_000;
const PRUNE_EVERY_ROUNDS = 100;
const NO_CLAIM_AFTER_READ_FAILURE_MS = 30_000;

const encodeValue = (balance: bigint | null, allowance: bigint | null): string => `${balance ?? '-'}/${allowance ?? '-'}`;
const bigOrNull = (s: string | null): bigint | null => (s === null ? null : BigInt(s));

export class ReplicaSync {
  readonly replicaId: string;
  private readonly coordination: Coordination;
  private readonly pubsub: PubSub;
  private readonly heartbeatMs: number;
  private readonly graceBlocks: bigint;
  private readonly base: string;
  private readonly group: string;
  private readonly pairsKey: string;
  private readonly valuesKey: string;
  private readonly channel: string;

  private subscription: Subscription | null = null;
  private subscribing: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private active = false;
  private closed = false;
  /** serialises registration writes, heartbeats and leaving */
  private chain: Promise<void> = Promise.resolve();
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();
  private readonly invalid = new Set<string>();
  private flushScheduled = false;
  private needFullSync = true;
  /** highest block a leader round was completed for (from messages, or by this replica) */
  private lastLeaderBlock: bigint | null = null;
  /** first block seen since activation: the grace period for a missing leader counts from here */
  private firstBlock: bigint | null = null;
  private noClaimUntil = 0;
  private leadRounds = 0;
  private degradedSince: number | null = null;
  private missingLeaderLogged = false;

  constructor(
    chainId: number,
    options: ReplicaOptions,
    private readonly host: ReplicaHost,
    private readonly logger?: ReplicaLogger,
  ) {
    this.coordination = options.coordination;
    this.pubsub = options.pubsub;
    this.replicaId = options.replicaId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.graceBlocks = BigInt(options.leaderGraceBlocks ?? 3);
    this.base = `balances:${chainId}`;
    this.group = `${this.base}:replicas`;
    this.pairsKey = `${this.base}:pairs:${this.replicaId}`;
    this.valuesKey = `${this.base}:values`;
    this.channel = `${this.base}:changes`;
  }

  private get ttlMs(): number {
    return this.heartbeatMs * 3;
  }

  // ---- lifecycle -------------------------------------------------------------------------------------------

  /** The replica has watchers: subscribe, register and heartbeat. */
  activate(): void {
    if (this.active || this.closed) return;
    this.active = true;
    this.firstBlock = null;
    this.lastLeaderBlock = null;
    this.missingLeaderLogged = false;
    this.needFullSync = true;
    this.subscribing ??= this.subscribe();
    this.enqueue(() => this.beat());
    this.heartbeat = setInterval(() => this.enqueue(() => this.beat()), this.heartbeatMs);
    this.heartbeat.unref?.();
  }

  /** No watchers left: leave the group and drop the registration (best effort; it would expire anyway). */
  deactivate(): void {
    if (!this.active) return;
    this.active = false;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.added.clear();
    this.removed.clear();
    this.enqueue(() => this.leave());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.deactivate();
    this.closed = true;
    await this.chain;
    await this.subscribing?.catch(() => undefined);
    await this.subscription?.unsubscribe().catch(() => undefined);
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.chain.then(task, task).catch(() => undefined);
    this.chain = next;
    return next;
  }

  private async subscribe(): Promise<void> {
    try {
      this.subscription = await this.pubsub.subscribe(this.channel, (m) => this.onMessage(m), {
        onResubscribed: () => this.host.resync(),
      });
    } catch (err) {
      this.logger?.warn({ err }, 'balance replicas: could not subscribe; reading locally');
      this.subscribing = null;
    }
  }

  private async beat(): Promise<void> {
    if (!this.active) return;
    try {
      await this.coordination.announce(this.group, this.replicaId, this.ttlMs);
      const exists = await this.coordination.touch(this.pairsKey, this.ttlMs);
      if (this.needFullSync || !exists) {
        this.needFullSync = false;
        this.added.clear();
        this.removed.clear();
        await this.coordination.setReplace(this.pairsKey, this.host.localKeys(), this.ttlMs);
      }
      await this.writeQueued();
      this.recovered();
    } catch (err) {
      this.needFullSync = true;
      this.degraded(err);
    }
  }

  private async leave(): Promise<void> {
    try {
      await this.coordination.withdraw(this.group, this.replicaId);
      await this.coordination.delete([this.pairsKey]);
    } catch {
      // it expires
    }
  }

  // ---- registration ----------------------------------------------------------------------------------------

  pairsAdded(keys: readonly string[]): void {
    for (const k of keys) {
      this.added.add(k);
      this.removed.delete(k);
    }
    this.scheduleFlush();
  }

  pairsRemoved(keys: readonly string[]): void {
    for (const k of keys) {
      this.removed.add(k);
      this.added.delete(k);
      this.invalid.delete(k);
    }
    this.scheduleFlush();
  }

  /** These pairs were read outside the shared flow: the next leader must publish them again. */
  invalidate(keys: readonly string[]): void {
    for (const k of keys) this.invalid.add(k);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.enqueue(() => this.writeQueued());
    });
  }

  private async writeQueued(): Promise<void> {
    const add = this.active ? [...this.added] : [];
    const remove = this.active ? [...this.removed] : [];
    const invalid = [...this.invalid];
    this.added.clear();
    this.removed.clear();
    this.invalid.clear();
    try {
      if (add.length > 0) await this.coordination.setAdd(this.pairsKey, add, this.ttlMs);
      if (remove.length > 0) await this.coordination.setRemove(this.pairsKey, remove);
    } catch (err) {
      this.needFullSync = true; // the next successful heartbeat rewrites the whole registration
      this.degraded(err);
    }
    try {
      if (invalid.length > 0) await this.coordination.hashDelete(this.valuesKey, invalid);
    } catch (err) {
      for (const k of invalid) this.invalid.add(k); // retried with the next write
      this.degraded(err);
    }
  }

  // ---- per-block rounds ------------------------------------------------------------------------------------

  /** Runs this replica's part of the block: 'local' means the caller must read its own pairs now. */
  async round(block: BlockHead): Promise<RoundMode> {
    this.firstBlock ??= block.number;
    if (this.lastLeaderBlock !== null && block.number <= this.lastLeaderBlock) return this.followerOrLocal(block);
    if (Date.now() >= this.noClaimUntil) {
      let won: boolean;
      try {
        won = await this.coordination.claim(`${this.base}:lead:${block.number}:${block.hash}`, this.replicaId, CLAIM_TTL_MS);
      } catch (err) {
        this.degraded(err);
        return 'local';
      }
      this.recovered();
      if (won) return (await this.lead(block)) ? 'leader' : 'local';
    }
    return this.followerOrLocal(block);
  }

  private followerOrLocal(block: BlockHead): RoundMode {
    if (!this.subscription?.live) return 'local';
    const reference = this.lastLeaderBlock ?? this.firstBlock ?? block.number;
    if (block.number - reference > this.graceBlocks) {
      if (!this.missingLeaderLogged) {
        this.missingLeaderLogged = true;
        this.logger?.warn({ block: block.number.toString(), lastLeaderBlock: this.lastLeaderBlock?.toString() ?? null }, 'balance replicas: no leader round seen; reading locally');
      }
      return 'local';
    }
    return 'follower';
  }

  /** The leader's round. False when Redis failed before anything was read (the caller reads locally). */
  private async lead(block: BlockHead): Promise<boolean> {
    const local = this.host.localKeys();
    let keys: string[];
    try {
      const members = (await this.coordination.liveMembers(this.group)).filter((m) => m !== this.replicaId);
      const remote = await this.coordination.setUnion(members.map((m) => `${this.base}:pairs:${m}`));
      keys = [...new Set([...local, ...remote])];
    } catch (err) {
      this.degraded(err);
      return false;
    }
    let values: TokenValues[];
    try {
      values = keys.length > 0 ? await this.host.read(keys, block.number) : [];
    } catch {
      // this replica's RPC is failing: let another one lead for a while
      this.noClaimUntil = Date.now() + NO_CLAIM_AFTER_READ_FAILURE_MS;
      return true;
    }
    const read: SharedValue[] = keys.map((k, i) => [k, values[i].balance, values[i].allowance]);
    this.host.apply(read, block.number);
    this.markLeaderBlock(block.number);
    try {
      const previous = keys.length > 0 ? await this.coordination.hashGet(this.valuesKey, keys) : [];
      const changed = read.filter(([, b, a], i) => previous[i] !== encodeValue(b, a));
      await this.publish(block.number, changed);
      await this.coordination.hashSet(this.valuesKey, changed.map(([k, b, a]) => [k, encodeValue(b, a)] as const), VALUES_TTL_MS);
      if (++this.leadRounds % PRUNE_EVERY_ROUNDS === 0) await this.prune(keys);
    } catch (err) {
      // the local watchers are served; the others converge through the next leader (values were not recorded)
      this.invalidate(local);
      this.degraded(err);
    }
    return true;
  }

  private async publish(block: bigint, changed: readonly SharedValue[]): Promise<void> {
    const messages = Math.max(1, Math.ceil(changed.length / PAIRS_PER_MESSAGE));
    for (let m = 0; m < messages; m++) {
      const part = changed.slice(m * PAIRS_PER_MESSAGE, (m + 1) * PAIRS_PER_MESSAGE);
      const message: ChangeMessage = {
        from: this.replicaId,
        block: block.toString(),
        pairs: part.map(([k, b, a]) => [k, b === null ? null : b.toString(), a === null ? null : a.toString()]),
        ...(m === messages - 1 ? { done: true } : {}),
      };
      await this.pubsub.publish(this.channel, JSON.stringify(message));
    }
  }

  /** Drops recorded values of pairs nobody watches any more. */
  private async prune(current: readonly string[]): Promise<void> {
    const keep = new Set(current);
    const fields = await this.coordination.hashFields(this.valuesKey);
    const stale = fields.filter((f) => !keep.has(f));
    if (stale.length > 0) await this.coordination.hashDelete(this.valuesKey, stale);
    await this.coordination.touch(this.valuesKey, VALUES_TTL_MS);
  }

  private onMessage(raw: string): void {
    let message: ChangeMessage;
    let block: bigint;
    try {
      message = JSON.parse(raw) as ChangeMessage;
      block = BigInt(message.block);
    } catch {
      this.logger?.warn({ length: raw.length }, 'balance replicas: malformed change message ignored');
      return;
    }
    if (message.done) this.markLeaderBlock(block);
    if (message.from === this.replicaId || !this.active) return;
    const values: SharedValue[] = message.pairs.map(([k, b, a]) => [k, bigOrNull(b), bigOrNull(a)]);
    this.host.apply(values, block);
  }

  private markLeaderBlock(block: bigint): void {
    if (this.lastLeaderBlock === null || block > this.lastLeaderBlock) this.lastLeaderBlock = block;
    this.missingLeaderLogged = false;
  }

  private degraded(err: unknown): void {
    if (this.degradedSince !== null) return;
    this.degradedSince = Date.now();
    this.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'balance replicas: coordination unavailable; reading locally');
  }

  private recovered(): void {
    if (this.degradedSince === null) return;
    this.logger?.info({ downForMs: Date.now() - this.degradedSince }, 'balance replicas: coordination back');
    this.degradedSince = null;
    // Redis may have lost our registration (restart): rewrite it now rather than at the next heartbeat
    this.needFullSync = true;
    if (this.active) void this.enqueue(() => this.beat());
  }
}
