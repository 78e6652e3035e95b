/**
 * `Coordination` on Redis. Every key is `<namespace><key>`. Presence uses one expiring key per member plus a
 * set listing the members, so liveness is decided by Redis's own clock (no clock skew between replicas).
 * Large member/field lists are split into several commands of one pipeline (MULTI where atomicity matters).
 *
 * @example
 *   const coordination = new RedisCoordination(openRedisConnection({ url, name: 'coordination' }), 'batchbook:');
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { Coordination } from './coordination.js';
import { closeRedisConnection } from './redis-connection.js';

/** arguments per SADD / HMGET / HSET command */
const CHUNK = 2_000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs a pipeline or MULTI; rejects with the first command error. */
async function run(pipeline: ChainableCommander): Promise<unknown[]> {
  const results = await pipeline.exec();
  if (!results) throw new Error('redis: transaction aborted');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

export class RedisCoordination implements Coordination {
  readonly kind = 'redis' as const;

  constructor(
    readonly redis: Redis,
    readonly namespace: string,
    private readonly options: { ownsConnection?: boolean } = {},
  ) {}

  private k(key: string): string {
    return this.namespace + key;
  }

  private aliveKey(group: string, member: string): string {
    return this.k(`${group}:alive:${member}`);
  }

  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.k(key), owner, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async announce(group: string, member: string, ttlMs: number): Promise<void> {
    await run(
      this.redis
        .multi()
        .set(this.aliveKey(group, member), '1', 'PX', ttlMs)
        .sadd(this.k(group), member)
        // the member list outlives its members a while, then disappears with the last of them
        .pexpire(this.k(group), Math.max(ttlMs * 10, 60_000)),
    );
  }

  async liveMembers(group: string): Promise<string[]> {
    const members = await this.redis.smembers(this.k(group));
    if (members.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const m of members) pipeline.exists(this.aliveKey(group, m));
    const alive = await run(pipeline);
    const dead = members.filter((_, i) => alive[i] !== 1);
    if (dead.length > 0) await this.redis.srem(this.k(group), ...dead);
    return members.filter((_, i) => alive[i] === 1);
  }

  async withdraw(group: string, member: string): Promise<void> {
    await run(this.redis.multi().del(this.aliveKey(group, member)).srem(this.k(group), member));
  }

  async setAdd(key: string, members: readonly string[], ttlMs: number): Promise<void> {
    if (members.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const part of chunks(members)) pipeline.sadd(this.k(key), ...part);
    pipeline.pexpire(this.k(key), ttlMs);
    await run(pipeline);
  }

  async setRemove(key: string, members: readonly string[]): Promise<void> {
    if (members.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const part of chunks(members)) pipeline.srem(this.k(key), ...part);
    await run(pipeline);
  }

  async setReplace(key: string, members: readonly string[], ttlMs: number): Promise<void> {
    const multi = this.redis.multi().del(this.k(key));
    if (members.length > 0) {
      for (const part of chunks(members)) multi.sadd(this.k(key), ...part);
      multi.pexpire(this.k(key), ttlMs);
    }
    await run(multi);
  }

  async setUnion(keys: readonly string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    return this.redis.sunion(...keys.map((key) => this.k(key)));
  }

  async touch(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.pexpire(this.k(key), ttlMs)) === 1;
  }

  async hashGet(key: string, fields: readonly string[]): Promise<Array<string | null>> {
    if (fields.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const part of chunks(fields)) pipeline.hmget(this.k(key), ...part);
    const results = await run(pipeline);
    return (results as Array<Array<string | null>>).flat();
  }

  async hashSet(key: string, entries: ReadonlyArray<readonly [string, string]>, ttlMs: number): Promise<void> {
    if (entries.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const part of chunks(entries)) pipeline.hset(this.k(key), ...part.flat());
    pipeline.pexpire(this.k(key), ttlMs);
    await run(pipeline);
  }

  async hashDelete(key: string, fields: readonly string[]): Promise<void> {
    if (fields.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const part of chunks(fields)) pipeline.hdel(this.k(key), ...part);
    await run(pipeline);
  }

  async hashFields(key: string): Promise<string[]> {
    return this.redis.hkeys(this.k(key));
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.redis.del(...keys.map((key) => this.k(key)));
  }

  async close(): Promise<void> {
    if (this.options.ownsConnection) await closeRedisConnection(this.redis);
  }
}
