/**
 * The RabbitMQ queue on the real local broker: publisher confirms, persistent messages in a durable queue,
 * manual ack / requeue / dead-letter, prefetch, a clean close, and recovery after the broker drops the
 * connection (only this test's own connection is dropped: the broker is shared). Each run uses its own queue
 * names and deletes them at the end. Skips with one line when no broker runs (fails under CI=true).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { connect } from 'amqplib';
import { AmqpQueue, QueueError, type ConsumeDecision, type QueuedMessage } from './amqp-queue.js';
import { closeConnectionsNamed, deleteQueueTopology, probeBroker, uniqueQueueName } from '../../../test/fixtures/rabbitmq.js';
import { waitFor } from '../../../test/fixtures/wait-for.js';

const broker = await probeBroker();

describe('RabbitMQ queue', { skip: broker.skip }, () => {
  const queues: string[] = [];
  const open: AmqpQueue[] = [];
  const openQueue = async (options: { prefetch?: number; connectionName?: string } = {}) => {
    const name = uniqueQueueName();
    queues.push(name);
    const queue = await AmqpQueue.open({ url: broker.url, queue: name, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 }, ...options });
    open.push(queue);
    return queue;
  };
  const decisions = (...list: ConsumeDecision[]) => {
    const seen: QueuedMessage[] = [];
    const handler = async (m: QueuedMessage) => {
      seen.push(m);
      return list.shift() ?? 'ack';
    };
    return { seen, handler };
  };

  after(async () => {
    for (const q of open) await q.close();
    for (const name of queues) await deleteQueueTopology(broker.url, name);
  });

  it('publishes persistent messages into a durable queue and resolves after the broker confirmed', async () => {
    const queue = await openQueue();
    await queue.publish(JSON.stringify({ deliveryId: 'd1' }), { messageId: 'd1', headers: { attempt: 1 } });
    assert.deepEqual(await queue.depth(), { ready: 1, dead: 0 });
    const connection = await connect(broker.url);
    try {
      const channel = await connection.createChannel();
      const message = await channel.get(queue.queue, { noAck: false });
      assert.ok(message);
      assert.equal(message.properties.deliveryMode, 2, 'persistent');
      assert.equal(message.properties.messageId, 'd1');
      assert.equal(message.properties.headers?.attempt, 1);
      assert.deepEqual(JSON.parse(message.content.toString()), { deliveryId: 'd1' });
      channel.nack(message, false, true);
      // the queue is durable with its dead-letter arguments: re-declaring it otherwise is refused by the broker
      const probe = await connection.createChannel();
      probe.on('error', () => {});
      await assert.rejects(probe.assertQueue(queue.queue, { durable: false }), /PRECONDITION_FAILED/);
      await channel.close();
    } finally {
      await connection.close();
    }
  });

  it('consumes with manual acks: ack removes, requeue redelivers, dead-letter moves to <queue>.dead', async () => {
    const queue = await openQueue();
    const { seen, handler } = decisions('requeue', 'ack', 'dead-letter');
    await queue.publish('{"n":1}', { messageId: 'm1' });
    await queue.consume(handler);
    await waitFor('the requeued message to come back and be acked', () => seen.length >= 2);
    assert.equal(seen[0]!.messageId, 'm1');
    assert.equal(seen[0]!.redelivered, false);
    assert.equal(seen[1]!.messageId, 'm1');
    assert.equal(seen[1]!.redelivered, true);
    await queue.publish('{"n":2}', { messageId: 'm2' });
    await waitFor('m2 to be dead-lettered', async () => (await queue.depth()).dead === 1);
    assert.deepEqual(await queue.depth(), { ready: 0, dead: 1 });
    const connection = await connect(broker.url);
    try {
      const channel = await connection.createChannel();
      const dead = await channel.get(queue.deadLetterQueue, { noAck: true });
      assert.ok(dead);
      assert.equal(dead.properties.messageId, 'm2');
      const death = (dead.properties.headers?.['x-death'] as Array<{ queue: string; reason: string }>)[0]!;
      assert.equal(death.queue, queue.queue);
      assert.equal(death.reason, 'rejected');
      await channel.close();
    } finally {
      await connection.close();
    }
  });

  it('a handler that throws gets its message requeued once, then dead-lettered', async () => {
    const queue = await openQueue();
    let calls = 0;
    await queue.consume(async () => {
      calls += 1;
      throw new Error('boom');
    });
    await queue.publish('{}', { messageId: 'poison' });
    await waitFor('the poison message in the dead-letter queue', async () => (await queue.depth()).dead === 1);
    assert.equal(calls, 2);
  });

  it('prefetch bounds the unacknowledged messages per consumer', async () => {
    const queue = await openQueue({ prefetch: 2 });
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let done = 0;
    await queue.consume(async () => {
      running += 1;
      most = Math.max(most, running);
      await gate;
      running -= 1;
      done += 1;
      return 'ack';
    });
    for (let i = 0; i < 5; i += 1) await queue.publish(`{"i":${i}}`, { messageId: `p${i}` });
    await waitFor('two messages in the handler', () => running === 2);
    assert.equal((await queue.depth()).ready, 3, 'the other three wait in the broker');
    release();
    await waitFor('all five handled', () => done === 5);
    assert.equal(most, 2);
  });

  it('close lets a running handler finish and ack; afterwards publish and consume refuse', async () => {
    const queue = await openQueue();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    await queue.consume(async () => {
      started = true;
      await gate;
      return 'ack';
    });
    await queue.publish('{}', { messageId: 'slow' });
    await waitFor('the handler to start', () => started);
    const closing = queue.close();
    release();
    await closing;
    await assert.rejects(queue.publish('{}', { messageId: 'late' }), QueueError);
    await assert.rejects(queue.consume(async () => 'ack'), QueueError);
    const check = await AmqpQueue.open({ url: broker.url, queue: queue.queue });
    try {
      assert.deepEqual(await check.depth(), { ready: 0, dead: 0 }, 'the ack went out before the connection closed');
    } finally {
      await check.close();
    }
  });

  it('recovers when the broker drops the connection: re-declares, resumes consuming, publishes again', async () => {
    const connectionName = uniqueQueueName('bb-test-conn');
    const queue = await openQueue({ connectionName });
    const { seen, handler } = decisions();
    await queue.consume(handler);
    await queue.publish('{"before":true}', { messageId: 'before-drop' });
    await waitFor('the first message', () => seen.length === 1);
    assert.equal(await closeConnectionsNamed(connectionName), 1);
    await queue.publish('{"after":true}', { messageId: 'after-drop' });
    await waitFor('the message published after the drop to be consumed', () => seen.some((m) => m.messageId === 'after-drop'));
    await waitFor('the queue to be empty', async () => (await queue.depth()).ready === 0);
  });

  it('refuses to open when no broker answers, without showing the password', async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as { port: number }).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    await assert.rejects(
      AmqpQueue.open({ url: `amqp://guest:hunter2@127.0.0.1:${port}`, queue: 'never', initialRetries: 0 }),
      (e: unknown) => e instanceof QueueError && /cannot connect to amqp:\/\/127\.0\.0\.1:\d+/.test(e.message) && !e.message.includes('hunter2'),
    );
  });
});
