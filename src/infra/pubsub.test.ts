import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryPubSub, type PubSub } from './pubsub.js';
import { RedisPubSub } from './redis-pubsub.js';
import { closeRedisConnection, openRedisConnection, waitUntilReady } from './redis-connection.js';
import { openSharedBackend } from './shared-backend.js';
import { deleteNamespace, ensureLocalRedis, startPrivateRedis, uniqueNamespace } from './test-redis.js';
import { skipUnless } from '../../test/fixtures/required-services.js';

const redisSkip = await skipUnless('redis');
const redisServerSkip = await skipUnless('redis-server');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

let redisUrl: string;
const namespace = uniqueNamespace('pubsub');

before(async () => {
  if (!redisSkip) redisUrl = await ensureLocalRedis();
});
after(async () => {
  if (redisUrl) await deleteNamespace(redisUrl, namespace);
});

function contract(name: string, open: () => Promise<{ a: PubSub; b: PubSub; close: () => Promise<void> }>, skip: string | false = false) {
  describe(`${name} pub/sub`, { skip }, () => {
    let a: PubSub;
    let b: PubSub;
    let close: () => Promise<void>;
    before(async () => ({ a, b, close } = await open()));
    after(async () => close());

    it('delivers a message to every subscriber of the channel (across instances), in order, and only there', async () => {
      const gotA: string[] = [];
      const gotB: string[] = [];
      const other: string[] = [];
      const subA = await a.subscribe('chan', (m) => gotA.push(m));
      const subB = await b.subscribe('chan', (m) => gotB.push(m));
      const subO = await b.subscribe('other', (m) => other.push(m));
      assert.ok(subA.live && subB.live);
      for (let i = 0; i < 50; i++) await a.publish('chan', `m${i}`);
      await until('all messages', () => gotA.length === 50 && gotB.length === 50);
      assert.deepEqual(gotB, Array.from({ length: 50 }, (_, i) => `m${i}`));
      assert.deepEqual(other, []);
      await subB.unsubscribe();
      assert.equal(subB.live, false);
      await b.publish('chan', 'after');
      await until('a gets it', () => gotA.length === 51);
      // b's connection delivers in publish order: once the later message on 'other' is there, 'after' would be too
      await a.publish('other', 'witness');
      await until('the witness on b', () => other.length === 1);
      assert.equal(gotB.length, 50, 'no delivery after unsubscribe');
      await subA.unsubscribe();
      await subO.unsubscribe();
    });

    it('a throwing handler does not stop delivery to the others', async () => {
      const got: string[] = [];
      const s1 = await a.subscribe('throws', () => {
        throw new Error('boom');
      });
      const s2 = await a.subscribe('throws', (m) => got.push(m));
      await b.publish('throws', 'x');
      await until('delivery', () => got.length === 1);
      await s1.unsubscribe();
      await s2.unsubscribe();
    });
  });
}

contract('memory', async () => {
  const bus = new MemoryPubSub();
  return { a: bus, b: bus, close: () => bus.close() };
});

contract('redis', async () => {
  const one = await openSharedBackend({ redisUrl, namespace });
  const two = await openSharedBackend({ redisUrl, namespace });
  assert.equal(one.kind, 'redis');
  return {
    a: one.pubsub,
    b: two.pubsub,
    close: async () => {
      await one.close();
      await two.close();
    },
  };
}, redisSkip);

describe('redis pub/sub across an outage', { skip: redisServerSkip }, () => {
  it('reports the interruption, re-subscribes after reconnection, and publishing rejects meanwhile', async () => {
    const server = await startPrivateRedis();
    const ns = uniqueNamespace('pubsub-outage');
    const publisher = openRedisConnection({ url: server.url, name: 'pub', maxReconnectDelayMs: 100 });
    const subscriber = openRedisConnection({ url: server.url, name: 'sub', subscriber: true, maxReconnectDelayMs: 100 });
    const pubsub = new RedisPubSub({ publisher, subscriber, namespace: ns, ownsPublisher: true });
    try {
      assert.ok(await waitUntilReady(publisher, 3_000));
      assert.ok(await waitUntilReady(subscriber, 3_000));
      const got: string[] = [];
      const events: string[] = [];
      const sub = await pubsub.subscribe('c', (m) => got.push(m), {
        onInterrupted: () => events.push('interrupted'),
        onResubscribed: () => events.push('resubscribed'),
      });
      assert.equal(sub.live, true);
      await pubsub.publish('c', 'before');
      await until('first message', () => got.length === 1);

      await server.stop();
      await until('interruption reported', () => events.includes('interrupted'));
      assert.equal(sub.live, false);
      await assert.rejects(pubsub.publish('c', 'during'), /Stream isn't writeable and enableOfflineQueue options is false/, 'publishing while Redis is down rejects (fast)');

      await server.start();
      await until('resubscribed', () => events.includes('resubscribed'), 10_000);
      assert.equal(sub.live, true);
      assert.deepEqual(events, ['interrupted', 'resubscribed']);
      await until('publisher back', () => publisher.status === 'ready');
      await pubsub.publish('c', 'after');
      await until('message after the outage', () => got.length === 2);
      assert.deepEqual(got, ['before', 'after']);
    } finally {
      await pubsub.close();
      await server.stop();
    }
  });

  it('a subscription made while Redis is down becomes live when it comes up', async () => {
    const server = await startPrivateRedis();
    await server.stop();
    const ns = uniqueNamespace('pubsub-late');
    const backend = await openSharedBackend({ redisUrl: server.url, namespace: ns, connectWaitMs: 200 });
    try {
      const got: string[] = [];
      let resubscribed = 0;
      const sub = await backend.pubsub.subscribe('c', (m) => got.push(m), { onResubscribed: () => resubscribed++ });
      assert.equal(sub.live, false);
      await assert.rejects(backend.coordination.claim('k', 'a', 1_000), /Stream isn't writeable and enableOfflineQueue options is false/);
      await server.start();
      await until('live', () => sub.live, 10_000);
      assert.equal(resubscribed, 1, 'told that messages may have been missed');
      for (let i = 0; i < 100 && !(await backend.coordination.claim('k', 'a', 1_000).catch(() => false)); i++) await sleep(50);
      await backend.pubsub.publish('c', 'hello');
      await until('delivery', () => got.length === 1);
    } finally {
      await backend.close();
      await server.stop();
    }
  });
});

describe('closing', { skip: redisSkip }, () => {
  it('closing a Redis backend ends its connections', async () => {
    const backend = await openSharedBackend({ redisUrl: await ensureLocalRedis(), namespace });
    await backend.pubsub.subscribe('x', () => {});
    await backend.close();
    const redis = (backend.coordination as unknown as { redis: { status: string } }).redis;
    assert.equal(redis.status, 'end');
    await closeRedisConnection(redis as never);
  });
});
