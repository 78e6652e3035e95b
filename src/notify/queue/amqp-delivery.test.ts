/**
 * RabbitMQ mode against the real broker and a real PostgreSQL (issue 19, major 6): a worker whose database is
 * down does not spin (each requeue waits longer), and a row left `queued` whose message was lost is relayed again
 * and delivered instead of being stranded.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { createTestPostgres } from '../../../test/fixtures/databases.js';
import { deleteQueueTopology, probeBroker, uniqueQueueName } from '../../../test/fixtures/rabbitmq.js';
import { skipUnless } from '../../../test/fixtures/required-services.js';
import { waitFor } from '../../../test/fixtures/wait-for.js';
import { openDatabase } from '../../db/connection.js';
import { migrateToLatest } from '../../db/migrate.js';
import { insertNotifications } from '../../aux/notifications/notification-store.js';
import { insertSubscription } from '../../aux/notifications/subscription-store.js';
import type { ChannelName, DeliveryResult, NotificationChannel, OutgoingNotification } from '../channels/channel.js';
import { AmqpDelivery } from './amqp-delivery.js';
import { AmqpQueue } from './amqp-queue.js';

const broker = await probeBroker();
const postgres = await skipUnless('postgres');
const ACCOUNT = `0x${'ab'.repeat(20)}` as Address;

class RecordingChannel implements NotificationChannel {
  readonly name = 'webhook' as const;
  readonly delivered: string[] = [];
  missingConfiguration() {
    return null;
  }
  async validateTarget() {
    return null;
  }
  async deliver(n: OutgoingNotification): Promise<DeliveryResult> {
    this.delivered.push(n.id);
    return { ok: true };
  }
}

describe('RabbitMQ delivery with a real PostgreSQL', { skip: broker.skip || postgres }, () => {
  const queues: string[] = [];
  after(async () => {
    for (const name of queues) await deleteQueueTopology(broker.url, name);
  });

  async function setUp() {
    const server = await createTestPostgres();
    const database = await openDatabase({ kind: 'postgres', url: server.url });
    await migrateToLatest(database.db);
    await insertSubscription(database.db, { id: 'sub_1', account: ACCOUNT, channel: 'webhook', target: 'http://a', types: null, secret: 'whsec_x' });
    const name = uniqueQueueName();
    queues.push(name);
    const queue = await AmqpQueue.open({ url: broker.url, queue: name, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
    const channel = new RecordingChannel();
    const delivery = new AmqpDelivery({
      db: database.db,
      queue,
      attempt: { db: database.db, channels: new Map<ChannelName, NotificationChannel>([['webhook', channel]]), policy: { baseMs: 10, capMs: 40, maxAgeMs: 60_000 } },
      leaseMs: 30_000,
      pollIntervalMs: 50,
      batch: 8,
      requeueAfterMs: 300,
      databaseRetryMs: 100,
    });
    return { server, database, queue, channel, delivery };
  }

  it('a queued row whose message was lost is relayed again and delivered, not stranded', async () => {
    const { server, database, channel, delivery } = await setUp();
    const abort = new AbortController();
    try {
      await database.db.transaction().execute((trx) => insertNotifications(trx, [{ id: 'n-lost', chainId: 1, account: ACCOUNT, type: 'order_filled', message: 'm', timestamp: new Date(), metadata: { orderId: '0x1', chainId: 1 } }]));
      // as if the relay had published it and the broker then lost the message: queued, nothing in the queue
      await database.db.updateTable('notification_deliveries').set({ status: 'queued', next_attempt_at: new Date(Date.now() - 1000) }).execute();
      const running = delivery.run(abort.signal);
      await waitFor('the lost delivery delivered', async () => (await database.db.selectFrom('notification_deliveries').select('status').executeTakeFirstOrThrow()).status === 'delivered', 30_000);
      assert.deepEqual(channel.delivered, ['n-lost']);
      abort.abort();
      await running;
    } finally {
      abort.abort();
      await database.close();
      await server.drop();
    }
  });

  it('a worker whose database is down requeues with growing pauses instead of spinning', async () => {
    const { server, database, queue, delivery } = await setUp();
    try {
      await database.close(); // the database is gone for this worker
      const handled: number[] = [];
      await queue.consume(async (m) => {
        handled.push(Date.now());
        return delivery.handle(m);
      });
      await queue.publish(JSON.stringify({ notificationId: 'n-1', subscriptionId: 'sub_1' }), { messageId: 'n-1/sub_1' });
      await waitFor('five attempts', () => handled.length >= 5, 30_000);
      // 100 + 200 + 400 + 800 ms of pauses between the first and the fifth attempt (before: a requeue at once)
      assert.ok(handled[4]! - handled[0]! >= 1500, `five attempts within ${handled[4]! - handled[0]!} ms`);
      assert.ok(delivery.counts.requeued >= 4);
    } finally {
      await queue.close();
      await server.drop();
    }
  });
});
