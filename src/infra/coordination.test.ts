import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCoordination, type Coordination } from './coordination.js';
import { RedisCoordination } from './redis-coordination.js';
import { closeRedisConnection, openRedisConnection, waitUntilReady } from './redis-connection.js';
import { deleteNamespace, ensureLocalRedis, namespaceKeys, startPrivateRedis, uniqueNamespace } from './test-redis.js';
import { skipUnless } from '../../test/fixtures/required-services.js';

const redisSkip = await skipUnless('redis');
const redisServerSkip = await skipUnless('redis-server');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redisUrl: string;
const namespace = uniqueNamespace('coordination');

before(async () => {
  if (!redisSkip) redisUrl = await ensureLocalRedis();
});

after(async () => {
  if (redisUrl) await deleteNamespace(redisUrl, namespace);
});

/** The same contract for both backends. */
function contract(name: string, open: () => Promise<{ c: Coordination; close: () => Promise<void> }>, skip: string | false = false) {
  describe(`${name} coordination`, { skip }, () => {
    let c: Coordination;
    let close: () => Promise<void>;
    before(async () => ({ c, close } = await open()));
    after(async () => close());

    it('claim: exactly one of many concurrent claimants wins, until the claim expires', async () => {
      const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => c.claim('claim:a', `r${i}`, 200)));
      assert.equal(wins.filter(Boolean).length, 1);
      assert.equal(await c.claim('claim:a', 'late', 200), false);
      assert.equal(await c.claim('claim:b', 'other key', 200), true);
      await sleep(260);
      assert.equal(await c.claim('claim:a', 'after expiry', 200), true);
    });

    it('presence: members are live until their announcement expires or they withdraw', async () => {
      await c.announce('group', 'a', 150);
      await c.announce('group', 'b', 5_000);
      await c.announce('group', 'c', 5_000);
      assert.deepEqual((await c.liveMembers('group')).sort(), ['a', 'b', 'c']);
      await c.withdraw('group', 'c');
      await sleep(220);
      assert.deepEqual(await c.liveMembers('group'), ['b'], 'a expired, c withdrew');
      await c.announce('group', 'a', 5_000);
      assert.deepEqual((await c.liveMembers('group')).sort(), ['a', 'b'], 'a came back');
      assert.deepEqual(await c.liveMembers('nobody'), []);
    });

    it('sets: add, remove, replace, union, expiry and touch', async () => {
      const many = Array.from({ length: 5_000 }, (_, i) => `m${i}`);
      await c.setAdd('set:1', many, 5_000);
      await c.setAdd('set:2', ['m0', 'x', 'y'], 5_000);
      await c.setRemove('set:2', ['y']);
      const union = await c.setUnion(['set:1', 'set:2', 'set:missing']);
      assert.equal(union.length, 5_001);
      assert.ok(union.includes('x') && !union.includes('y'));
      await c.setReplace('set:2', ['z'], 150);
      assert.deepEqual(await c.setUnion(['set:2']), ['z']);
      assert.equal(await c.touch('set:2', 150), true);
      await sleep(220);
      assert.deepEqual(await c.setUnion(['set:2']), [], 'expired');
      assert.equal(await c.touch('set:2', 1000), false, 'touching an expired key says so');
      await c.setReplace('set:1', [], 1000);
      assert.deepEqual(await c.setUnion(['set:1']), [], 'replaced by nothing = deleted');
      assert.deepEqual(await c.setUnion([]), []);
    });

    it('hashes: get, set, delete, fields, expiry', async () => {
      const entries = Array.from({ length: 4_500 }, (_, i) => [`f${i}`, `v${i}`] as const);
      await c.hashSet('hash', entries, 5_000);
      const got = await c.hashGet('hash', ['f0', 'f4499', 'nope', 'f2001']);
      assert.deepEqual(got, ['v0', 'v4499', null, 'v2001']);
      assert.equal((await c.hashGet('hash', entries.map(([f]) => f))).length, 4_500);
      await c.hashDelete('hash', ['f0', 'f1']);
      const fields = await c.hashFields('hash');
      assert.equal(fields.length, 4_498);
      assert.ok(!fields.includes('f0'));
      await c.hashSet('hash:short', [['a', '1']], 120);
      await sleep(200);
      assert.deepEqual(await c.hashGet('hash:short', ['a']), [null]);
      await c.delete(['hash']);
      assert.deepEqual(await c.hashFields('hash'), []);
    });
  });
}

contract('memory', async () => {
  const c = new MemoryCoordination();
  return { c, close: () => c.close() };
});

contract('redis', async () => {
  const redis = openRedisConnection({ url: redisUrl, name: 'test-coordination' });
  assert.ok(await waitUntilReady(redis, 3_000));
  const c = new RedisCoordination(redis, namespace, { ownsConnection: true });
  return { c, close: () => c.close() };
}, redisSkip);

describe('redis coordination when Redis is down', { skip: redisServerSkip }, () => {
  it('rejects while Redis is down (never hangs), and works again once Redis is back', { timeout: 60_000 }, async () => {
    const server = await startPrivateRedis();
    const ns = uniqueNamespace('outage');
    const redis = openRedisConnection({ url: server.url, name: 'test-outage', maxReconnectDelayMs: 100 });
    const c = new RedisCoordination(redis, ns, { ownsConnection: true });
    try {
      assert.ok(await waitUntilReady(redis, 3_000));
      assert.equal(await c.claim('k', 'a', 10_000), true);
      await server.stop();
      await sleep(50);
      // both calls reject while the server is still down: they are not queued until it returns
      await assert.rejects(c.claim('k2', 'a', 10_000), /Stream isn't writeable and enableOfflineQueue options is false/);
      await assert.rejects(c.setUnion(['x']), /Stream isn't writeable and enableOfflineQueue options is false/);
      await server.start();
      assert.ok(await waitUntilReady(redis, 5_000), 'reconnected');
      assert.equal(await c.claim('k2', 'a', 10_000), true, 'works after reconnection (a fresh server)');
      assert.deepEqual(await namespaceKeys(server.url, ns), [`${ns}k2`]);
    } finally {
      await c.close();
      await server.stop();
    }
  });

  it('a connection to a Redis that never existed rejects without crashing', async () => {
    const redis = openRedisConnection({ url: 'redis://127.0.0.1:1', name: 'test-nowhere' });
    const c = new RedisCoordination(redis, 'x:', { ownsConnection: true });
    try {
      assert.equal(await waitUntilReady(redis, 300), false);
      await assert.rejects(c.claim('k', 'a', 1000), /Stream isn't writeable and enableOfflineQueue options is false/);
    } finally {
      await c.close();
      await closeRedisConnection(redis);
    }
  });
});
