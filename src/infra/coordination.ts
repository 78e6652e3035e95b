/**
 * Shared coordination state for work split across replicas: claims (who does a piece of work), presence
 * (which replicas are alive), and small TTL'd sets and hashes. Two backends with the same semantics:
 * `MemoryCoordination` (one process; also lets tests run several "replicas" in one process) and
 * `RedisCoordination` (redis-coordination.ts). Keys are relative: each backend prefixes them with its namespace.
 *
 * Failures: a Redis backend rejects (fast, never hangs) when Redis is unreachable; callers fall back to doing
 * the work locally. The memory backend never fails.
 *
 * @example
 *   const coordination = new MemoryCoordination();
 *   if (await coordination.claim(`block:${n}`, replicaId, 60_000)) { ...this replica does block n... }
 */

export interface Coordination {
  readonly kind: 'memory' | 'redis';
  /** Takes `key` for `owner` unless somebody holds it (SET NX PX): true when this caller won. */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Marks `member` of `group` alive for `ttlMs` (a presence heartbeat). */
  announce(group: string, member: string, ttlMs: number): Promise<void>;
  /** Members of `group` whose last announcement has not expired (expired ones are pruned). */
  liveMembers(group: string): Promise<string[]>;
  /** Removes `member` from `group` at once (a graceful leave). */
  withdraw(group: string, member: string): Promise<void>;
  /** Adds members to a set and (re)sets the set's time to live. */
  setAdd(key: string, members: readonly string[], ttlMs: number): Promise<void>;
  setRemove(key: string, members: readonly string[]): Promise<void>;
  /** Replaces a set's content atomically (an empty list deletes it). */
  setReplace(key: string, members: readonly string[], ttlMs: number): Promise<void>;
  /** Union of the members of several sets (missing sets are empty). */
  setUnion(keys: readonly string[]): Promise<string[]>;
  /** Extends a key's time to live; false when the key does not exist (expired or never written). */
  touch(key: string, ttlMs: number): Promise<boolean>;
  /** Values of hash fields, null where absent. */
  hashGet(key: string, fields: readonly string[]): Promise<Array<string | null>>;
  /** Writes hash fields and (re)sets the hash's time to live. */
  hashSet(key: string, entries: ReadonlyArray<readonly [string, string]>, ttlMs: number): Promise<void>;
  hashDelete(key: string, fields: readonly string[]): Promise<void>;
  hashFields(key: string): Promise<string[]>;
  delete(keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** The in-process backend: the same semantics as Redis, expiry checked on access. */
export class MemoryCoordination implements Coordination {
  readonly kind = 'memory' as const;
  private readonly strings = new Map<string, Expiring<string>>();
  private readonly sets = new Map<string, Expiring<Set<string>>>();
  private readonly hashes = new Map<string, Expiring<Map<string, string>>>();
  private readonly groups = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  private live<T>(map: Map<string, Expiring<T>>, key: string): Expiring<T> | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    if (this.live(this.strings, key)) return false;
    this.strings.set(key, { value: owner, expiresAt: this.now() + ttlMs });
    return true;
  }

  async announce(group: string, member: string, ttlMs: number): Promise<void> {
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Map()));
    members.set(member, this.now() + ttlMs);
  }

  async liveMembers(group: string): Promise<string[]> {
    const members = this.groups.get(group);
    if (!members) return [];
    const now = this.now();
    for (const [member, expiresAt] of members) if (expiresAt <= now) members.delete(member);
    return [...members.keys()];
  }

  async withdraw(group: string, member: string): Promise<void> {
    this.groups.get(group)?.delete(member);
  }

  async setAdd(key: string, members: readonly string[], ttlMs: number): Promise<void> {
    if (members.length === 0) return;
    let entry = this.live(this.sets, key);
    if (!entry) this.sets.set(key, (entry = { value: new Set(), expiresAt: 0 }));
    for (const m of members) entry.value.add(m);
    entry.expiresAt = this.now() + ttlMs;
  }

  async setRemove(key: string, members: readonly string[]): Promise<void> {
    const entry = this.live(this.sets, key);
    if (!entry) return;
    for (const m of members) entry.value.delete(m);
    if (entry.value.size === 0) this.sets.delete(key);
  }

  async setReplace(key: string, members: readonly string[], ttlMs: number): Promise<void> {
    if (members.length === 0) this.sets.delete(key);
    else this.sets.set(key, { value: new Set(members), expiresAt: this.now() + ttlMs });
  }

  async setUnion(keys: readonly string[]): Promise<string[]> {
    const union = new Set<string>();
    for (const key of keys) for (const m of this.live(this.sets, key)?.value ?? []) union.add(m);
    return [...union];
  }

  async touch(key: string, ttlMs: number): Promise<boolean> {
    const entry = this.live(this.strings, key) ?? this.live(this.sets, key) ?? this.live(this.hashes, key);
    if (!entry) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  async hashGet(key: string, fields: readonly string[]): Promise<Array<string | null>> {
    const entry = this.live(this.hashes, key);
    return fields.map((f) => entry?.value.get(f) ?? null);
  }

  async hashSet(key: string, entries: ReadonlyArray<readonly [string, string]>, ttlMs: number): Promise<void> {
    if (entries.length === 0) return;
    let entry = this.live(this.hashes, key);
    if (!entry) this.hashes.set(key, (entry = { value: new Map(), expiresAt: 0 }));
    for (const [f, v] of entries) entry.value.set(f, v);
    entry.expiresAt = this.now() + ttlMs;
  }

  async hashDelete(key: string, fields: readonly string[]): Promise<void> {
    const entry = this.live(this.hashes, key);
    if (!entry) return;
    for (const f of fields) entry.value.delete(f);
    if (entry.value.size === 0) this.hashes.delete(key);
  }

  async hashFields(key: string): Promise<string[]> {
    return [...(this.live(this.hashes, key)?.value.keys() ?? [])];
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.strings.delete(key);
      this.sets.delete(key);
      this.hashes.delete(key);
      this.groups.delete(key);
    }
  }

  async close(): Promise<void> {}
}
