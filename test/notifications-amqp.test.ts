/**
 * RabbitMQ mode (AMQP_URL) on a whole node with a RabbitMQ node of this test's own (the shared broker on 5672 is
 * never restarted): notifications go from the outbox through the durable queue to a real webhook receiver that
 * verifies signatures; a broker restart while deliveries are pending loses nothing; a poison message ends in the
 * dead-letter queue.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'amqplib';
import type { LocalAccount } from 'viem';
import { subscribeWithTypesTypedData } from '../src/aux/notifications/subscription-signatures.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { startPrivateBroker, uniqueQueueName, type PrivateBroker } from './fixtures/rabbitmq.js';
import { E18, trading, type Trading } from './fixtures/trading.js';
import { waitFor } from './fixtures/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from './fixtures/webhook-receiver.js';

const now = () => Math.floor(Date.now() / 1000);

describe('notifications in RabbitMQ mode (real broker)', { timeout: 900_000 }, () => {
  let broker: PrivateBroker | string;
  let app: TestApp | undefined;
  let t: Trading;
  let receiver: WebhookReceiver;
  const queue = uniqueQueueName('bb-notify');

  async function subscribe(account: LocalAccount, path: string): Promise<void> {
    const deadline = now() + 600;
    const target = `${receiver.url}${path}`;
    const signature = await account.signTypedData(subscribeWithTypesTypedData({ account: account.address, channel: 'webhook', target, types: ['order_cancelled'], deadline }));
    const res = await call(app!.baseUrl, 'POST', `/accounts/${account.address}/subscriptions`, { channel: 'webhook', target, types: ['order_cancelled'], deadline, signature });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    receiver.setSecret(path, res.body.secret);
  }

  /** A fresh trader places an order far from the market and cancels it: one order_cancelled notification. */
  async function cancelledOrder(path: string): Promise<{ uid: string; owner: LocalAccount }> {
    const { WETH, DAI } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    await subscribe(owner, path);
    const uid = await t.place(owner, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 100n, buyAmount: 10n ** 30n });
    await t.cancel(owner, uid);
    return { uid, owner };
  }

  before(async () => {
    broker = await startPrivateBroker();
    if (typeof broker === 'string') return;
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      AMQP_URL: broker.url,
      NOTIFY_AMQP_QUEUE: queue,
      NOTIFY_BACKOFF_BASE_MS: '100',
      NOTIFY_BACKOFF_CAP_MS: '400',
      NOTIFY_POLL_INTERVAL_MS: '200',
      NOTIFY_LEASE_MS: '3000',
    });
    t = trading(app);
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
    if (broker && typeof broker !== 'string') await broker.stop();
  });

  it('a notification reaches the webhook receiver through the queue', async (c) => {
    if (typeof broker === 'string') return c.skip(broker);
    const { uid } = await cancelledOrder('/one');
    const [hook] = await waitFor(
      'order_cancelled delivered',
      () => {
        const mine = receiver.received.filter((r) => r.path === '/one');
        return mine.length > 0 ? mine : null;
      },
      120_000,
    );
    assert.equal(hook!.body.type, 'order_cancelled');
    assert.equal(hook!.body.metadata.orderId, uid);
    assert.equal(hook!.body.id, hook!.id);
    assert.equal(receiver.rejected, 0);
    // the node declared its queue on this broker, its delivery worker consumes it, and it drained
    const connection = await connect(broker.url);
    try {
      const channel = await connection.createChannel();
      const state = await channel.checkQueue(queue);
      assert.equal(state.consumerCount, 1, 'the node consumes the queue');
      assert.equal(state.messageCount, 0);
    } finally {
      await connection.close();
    }
  });

  it('a broker restart while deliveries are pending loses nothing', async (c) => {
    if (typeof broker === 'string') return c.skip(broker);
    const b = broker;
    receiver.failWith(503);
    const paths = ['/r1', '/r2', '/r3'];
    const orders = await Promise.all(paths.map(cancelledOrder)); // three traders at once, not one after another
    await waitFor(
      'every delivery failing with 503 (pending: retried through the outbox and the queue)',
      async () => {
        for (const { owner } of orders) {
          const [sub] = (await call(app!.baseUrl, 'GET', `/accounts/${owner.address}/subscriptions`)).body;
          if (!/503/.test(sub?.lastError ?? '') || sub.pendingDeliveries !== 1) return false;
        }
        return true;
      },
      120_000,
    );
    await b.restartApp();
    receiver.failWith(null);
    const arrived = await waitFor(
      'every notification after the restart',
      () => {
        const got = paths.map((p) => receiver.received.find((r) => r.path === p));
        return got.every(Boolean) ? got : null;
      },
      180_000,
    );
    assert.deepEqual(arrived.map((r) => r!.body.metadata.orderId), orders.map((o) => o.uid));
  });

  it('a poison message goes to the dead-letter queue', async (c) => {
    if (typeof broker === 'string') return c.skip(broker);
    const connection = await connect(broker.url);
    try {
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(queue, Buffer.from('not a delivery'), { persistent: true, messageId: 'poison' });
      await channel.waitForConfirms();
      await waitFor('the poison message dead-lettered', async () => (await channel.checkQueue(`${queue}.dead`)).messageCount === 1, 60_000);
    } finally {
      await connection.close();
    }
  });
});
