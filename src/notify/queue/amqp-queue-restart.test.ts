/**
 * Durability across a broker restart, on a RabbitMQ node of this test's own (the shared broker is left alone):
 * confirmed messages survive `rabbitmqctl stop_app && start_app`, the queue reconnects by itself, publishes
 * again, and a consumer registered before the restart resumes and receives everything.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AmqpQueue, type QueuedMessage } from './amqp-queue.js';
import { startPrivateBroker, type PrivateBroker } from '../../../test/fixtures/rabbitmq.js';
import { waitFor } from '../../../test/fixtures/wait-for.js';

describe('RabbitMQ queue across a broker restart', { timeout: 600_000 }, () => {
  let broker: PrivateBroker | string;
  let first: AmqpQueue | null = null;
  let second: AmqpQueue | null = null;

  before(async () => {
    broker = await startPrivateBroker();
  });
  after(async () => {
    await first?.close();
    await second?.close();
    if (typeof broker !== 'string') await broker.stop();
  });

  it('keeps confirmed messages, reconnects, and resumes consuming', async (t) => {
    if (typeof broker === 'string') return t.skip(broker);
    const options = { url: broker.url, queue: 'bb.restart', reconnect: { initialDelayMs: 200, maxDelayMs: 1000 }, publishTimeoutMs: 120_000 };
    // a publisher with no consumer: its messages sit in the broker through the restart
    first = await AmqpQueue.open(options);
    for (const id of ['a', 'b', 'c']) await first.publish(JSON.stringify({ id }), { messageId: id });
    // a consumer on another connection that is busy (prefetch 1, gated) when the broker goes away
    second = await AmqpQueue.open({ ...options, prefetch: 1 });
    const seen: QueuedMessage[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await second.consume(async (m) => {
      seen.push(m);
      await gate;
      return 'ack';
    });
    await waitFor('the consumer to hold message a', () => seen.length === 1);

    await broker.restartApp();
    release();

    await first.publish(JSON.stringify({ id: 'd' }), { messageId: 'd' });
    await waitFor('every message to be consumed after the restart', () => new Set(seen.map((m) => m.messageId)).size === 4, 120_000);
    assert.deepEqual([...new Set(seen.map((m) => m.messageId))].sort(), ['a', 'b', 'c', 'd']);
    assert.equal(seen.filter((m) => m.messageId === 'a').length, 2, 'a was unacknowledged at the restart, so it came again');
    await waitFor('the queue to drain', async () => (await first!.depth()).ready === 0, 30_000);
    assert.deepEqual(await first.depth(), { ready: 0, dead: 0 });
  });
});
