/**
 * The outbox on both engines (PGlite, real PostgreSQL): notifications and their deliveries written in one
 * transaction, retries with backoff, dead letters after the maximum age with the last error on the subscription,
 * a gone target removing its subscription; and on PostgreSQL two dispatchers sharing the work, each delivery once.
 * The channel is defined here (the port's contract); the webhook channel is tested on its own and end to end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { createTestPostgres, engines } from '../../../test/fixtures/databases.js';
import { openDatabase } from '../../db/connection.js';
import { migrateToLatest } from '../../db/migrate.js';
import { toBytes } from '../../db/codec.js';
import type { Database } from '../../db/connection.js';
import { insertNotifications } from '../../aux/notifications/notification-store.js';
import { insertSubscription } from '../../aux/notifications/subscription-store.js';
import type { ProducedNotification } from '../../aux/notifications/notification-types.js';
import type { ChannelName, DeliveryResult, NotificationChannel, OutgoingNotification } from '../channels/channel.js';
import { fullJitterDelay } from './backoff.js';
import { OutboxDispatcher } from './outbox-dispatcher.js';
import { claimDue } from './delivery-store.js';
import type { DeliveryTarget } from '../channels/channel.js';

const ACCOUNT = `0x${'ab'.repeat(20)}` as Address;

function notification(i: number, account: Address = ACCOUNT): ProducedNotification {
  return { id: `n-${i}`, chainId: 31337, account, type: 'order_filled', message: `fill ${i}`, timestamp: new Date(1_700_000_000_000 + i), metadata: { orderId: `0x${i}`, chainId: 31337 } };
}

class TestChannel implements NotificationChannel {
  readonly name = 'webhook' as const;
  readonly delivered: string[] = [];
  answer: () => DeliveryResult = () => ({ ok: true });
  missingConfiguration() {
    return null;
  }
  async validateTarget() {
    return null;
  }
  async deliver(n: OutgoingNotification, _target?: DeliveryTarget): Promise<DeliveryResult> {
    const result = this.answer();
    if (result.ok) this.delivered.push(n.id);
    return result;
  }
}

function dispatcher(db: Database, channel: NotificationChannel, policy: Partial<{ baseMs: number; capMs: number; maxAgeMs: number }> = {}) {
  return new OutboxDispatcher({
    db: db.db,
    channels: new Map<ChannelName, NotificationChannel>([['webhook', channel]]),
    policy: { baseMs: 10, capMs: 40, maxAgeMs: 60_000, ...policy },
    leaseMs: 30_000,
    pollIntervalMs: 20,
    concurrency: 4,
  });
}

async function produce(db: Database, list: ProducedNotification[]) {
  return db.db.transaction().execute((trx) => insertNotifications(trx, list));
}

async function statuses(db: Database): Promise<Record<string, number>> {
  const rows = await db.db.selectFrom('notification_deliveries').select(['status']).execute();
  return rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// every top-level await comes before the first describe: node's runner does not run suites declared after one
const ENGINES = await engines();

describe('backoff with full jitter', () => {
  it('doubles from the base up to the cap, jittered over [0, ceiling)', () => {
    const policy = { baseMs: 1000, capMs: 60_000 };
    assert.deepEqual([1, 2, 3, 4, 7, 8, 30].map((n) => fullJitterDelay(n, policy, () => 0.999999)), [999, 1999, 3999, 7999, 59_999, 59_999, 59_999]);
    assert.equal(fullJitterDelay(5, policy, () => 0), 0);
    assert.equal(fullJitterDelay(3, policy, () => 0.5), 2000);
  });
});

for (const engine of ENGINES) {
  describe(`notification outbox (${engine.engine})`, { skip: engine.skip }, () => {
    it('deliveries are written with the notification, only for matching subscriptions, and producing twice stores once', async () => {
      const db = await engine.open();
      try {
        await migrateToLatest(db.db);
        await insertSubscription(db.db, { id: 'sub_all', account: ACCOUNT, channel: 'webhook', target: 'http://a', types: null, secret: 'whsec_x' });
        await insertSubscription(db.db, { id: 'sub_exp', account: ACCOUNT, channel: 'webhook', target: 'http://b', types: ['order_expired'], secret: 'whsec_y' });
        const first = await produce(db, [notification(1), notification(2, `0x${'cd'.repeat(20)}`)]);
        assert.deepEqual(first, { inserted: ['n-1', 'n-2'], deliveries: 1 });
        assert.deepEqual(await produce(db, [notification(1)]), { inserted: [], deliveries: 0 });
        const channel = new TestChannel();
        const d = dispatcher(db, channel);
        assert.equal(await d.dispatchOnce(), 1);
        assert.deepEqual(channel.delivered, ['n-1']);
        assert.deepEqual(await statuses(db), { delivered: 1 });
      } finally {
        await db.dispose();
      }
    });

    it('retries with backoff until the receiver answers, dead-letters after the maximum age, removes a gone target', async () => {
      const db = await engine.open();
      try {
        await migrateToLatest(db.db);
        await insertSubscription(db.db, { id: 'sub_1', account: ACCOUNT, channel: 'webhook', target: 'http://a', types: null, secret: 'whsec_x' });
        const channel = new TestChannel();
        let failures = 3;
        channel.answer = () => (failures-- > 0 ? { ok: false, retryable: true, error: 'HTTP 503 from a' } : { ok: true });
        const abort = new AbortController();
        const d = dispatcher(db, channel);
        const running = d.run(abort.signal);
        await produce(db, [notification(1)]);
        d.wake();
        await until('delivered after three failures', async () => (await statuses(db)).delivered === 1);
        assert.equal(channel.delivered.length, 1);
        const row = await db.db.selectFrom('notification_deliveries').selectAll().executeTakeFirstOrThrow();
        assert.equal(row.status, 'delivered');
        assert.equal(row.attempts, 4);
        const sub = await db.db.selectFrom('notification_subscriptions').select(['last_error']).executeTakeFirstOrThrow();
        assert.equal(sub.last_error, 'HTTP 503 from a', 'the last error stays visible');

        // a receiver that never comes back: dead after the maximum age
        abort.abort();
        await running;
        const abort2 = new AbortController();
        const dying = dispatcher(db, channel, { maxAgeMs: 300 });
        channel.answer = () => ({ ok: false, retryable: true, error: 'connection refused' });
        const running2 = dying.run(abort2.signal);
        await produce(db, [notification(2)]);
        await until('dead-lettered', async () => (await statuses(db)).dead === 1);
        assert.ok(dying.counts.retry >= 1, 'retried before giving up');
        const dead = await db.db.selectFrom('notification_subscriptions').select(['last_error']).executeTakeFirstOrThrow();
        assert.match(dead.last_error!, /^connection refused \(gave up on notification n-2\)$/);

        // a gone target: the subscription and its deliveries go
        channel.answer = () => ({ ok: false, retryable: false, error: 'HTTP 410', gone: true });
        await produce(db, [notification(3)]);
        await until('subscription removed', async () => (await db.db.selectFrom('notification_subscriptions').selectAll().execute()).length === 0);
        abort2.abort();
        await running2;
      } finally {
        await db.dispose();
      }
    });

    it('independent workers: a receiver that never answers does not hold every slot; fresh deliveries to others go on', async () => {
      const db = await engine.open();
      const held: Array<() => void> = [];
      try {
        await migrateToLatest(db.db);
        const slowAccount = `0x${'51'.repeat(20)}` as Address;
        await insertSubscription(db.db, { id: 'sub_slow', account: slowAccount, channel: 'webhook', target: 'http://tarpit', types: null, secret: 'whsec_x' });
        await insertSubscription(db.db, { id: 'sub_fast', account: ACCOUNT, channel: 'webhook', target: 'http://fast', types: null, secret: 'whsec_y' });
        const channel = new TestChannel();
        const calls: Record<string, number> = {};
        channel.deliver = async (n: OutgoingNotification, target: DeliveryTarget) => {
          calls[target.target] = (calls[target.target] ?? 0) + 1;
          if (target.target === 'http://tarpit') await new Promise<void>((resolve) => held.push(resolve));
          channel.delivered.push(n.id);
          return { ok: true };
        };
        const abort = new AbortController();
        const d = dispatcher(db, channel);
        const running = d.run(abort.signal);
        // a backlog for the tarpit first (older), then one notification for a healthy subscriber
        await produce(db, Array.from({ length: 6 }, (_, i) => notification(100 + i, slowAccount)));
        await until('the tarpit holds a delivery', async () => held.length >= 1);
        await produce(db, [notification(200)]);
        d.wake();
        await until('the healthy delivery done while the tarpit holds its slot', async () => channel.delivered.includes('n-200'));
        // concurrency 4: one subscription never takes the slot kept for fresh deliveries to others
        assert.ok(calls['http://tarpit']! <= 3, `the tarpit holds ${calls['http://tarpit']} slots`);
        // the healthy worker frees its slot once its delivery returns (its success is written with others)
        await until('only the tarpit holds slots', async () => d.active === calls['http://tarpit']);
        for (const release of held.splice(0)) release();
        await until('the backlog drains once the receiver answers', async () => {
          for (const release of held.splice(0)) release();
          return (await statuses(db)).delivered === 7;
        });
        abort.abort();
        await running;
      } finally {
        for (const release of held) release();
        await db.dispose();
      }
    });

    it('a circuit breaker per subscription: three failures in a row pause its deliveries; a delivery closes it again', async () => {
      const db = await engine.open();
      try {
        await migrateToLatest(db.db);
        const downAccount = `0x${'d0'.repeat(20)}` as Address;
        await insertSubscription(db.db, { id: 'sub_down', account: downAccount, channel: 'webhook', target: 'http://down', types: null, secret: 'whsec_x' });
        await insertSubscription(db.db, { id: 'sub_up', account: ACCOUNT, channel: 'webhook', target: 'http://up', types: null, secret: 'whsec_y' });
        const channel = new TestChannel();
        channel.deliver = async (n: OutgoingNotification, target: DeliveryTarget) => {
          if (target.target === 'http://down') return { ok: false, retryable: true, error: 'http://down did not answer within 5000 ms' };
          channel.delivered.push(n.id);
          return { ok: true };
        };
        // long backoff and breaker pauses (minutes): what is due again within the test is due to the breaker only
        const d = dispatcher(db, channel, { baseMs: 1, capMs: 600_000 });
        await produce(db, Array.from({ length: 5 }, (_, i) => notification(300 + i, downAccount)));
        // each failure makes its row wait; the other rows of the subscription stay due until the breaker opens
        for (let i = 0; i < 3; i++) await d.dispatchOnce();
        const sub = await db.db.selectFrom('notification_subscriptions').select(['consecutive_failures', 'paused_until']).where('id', '=', 'sub_down').executeTakeFirstOrThrow();
        assert.equal(sub.consecutive_failures, 3);
        assert.ok(sub.paused_until && new Date(sub.paused_until).getTime() > Date.now() + 60_000, 'paused for minutes');
        // two rows of the paused subscription are still due: a claim passes them over and takes the healthy one
        await produce(db, [notification(400)]);
        const claimed = await claimDue(db.db, 10, 30_000, { busy: [], perSubscription: 10, suspectLimit: 10 });
        assert.deepEqual(claimed.map((k) => k.notificationId), ['n-400']);
        // the receiver is back and the pause ends: the next delivery closes the breaker
        channel.deliver = async (n: OutgoingNotification) => {
          channel.delivered.push(n.id);
          return { ok: true };
        };
        await db.db.updateTable('notification_subscriptions').set({ paused_until: new Date(Date.now() - 1000) }).where('id', '=', 'sub_down').execute();
        await d.dispatchOnce();
        const closed = await db.db.selectFrom('notification_subscriptions').select(['consecutive_failures', 'paused_until']).where('id', '=', 'sub_down').executeTakeFirstOrThrow();
        assert.deepEqual(closed, { consecutive_failures: 0, paused_until: null });
      } finally {
        await db.dispose();
      }
    });

    it('claims made ahead and never started are given back when their subscription fails: attempts count only real attempts', async () => {
      const db = await engine.open();
      try {
        await migrateToLatest(db.db);
        const downAccount = `0x${'d1'.repeat(20)}` as Address;
        await insertSubscription(db.db, { id: 'sub_down', account: downAccount, channel: 'webhook', target: 'http://down', types: null, secret: 'whsec_x' });
        const calls = new Map<string, number>();
        const channel = new TestChannel();
        channel.deliver = async (n: OutgoingNotification) => {
          calls.set(n.id, (calls.get(n.id) ?? 0) + 1);
          return { ok: false, retryable: true, error: 'HTTP 503 from down' };
        };
        // retries and breaker pauses of minutes: every attempt in the test is a first one
        const d = new OutboxDispatcher({
          db: db.db, channels: new Map<ChannelName, NotificationChannel>([['webhook', channel]]), policy: { baseMs: 60_000, capMs: 600_000, maxAgeMs: 3_600_000 },
          leaseMs: 30_000, pollIntervalMs: 20, concurrency: 4, random: () => 0.99,
        });
        await produce(db, Array.from({ length: 10 }, (_, i) => notification(500 + i, downAccount)));
        const abort = new AbortController();
        const running = d.run(abort.signal);
        await until('the breaker opens', async () => (await db.db.selectFrom('notification_subscriptions').select('paused_until').executeTakeFirstOrThrow()).paused_until !== null);
        abort.abort();
        await running;
        const rows = await db.db.selectFrom('notification_deliveries').select(['notification_id', 'attempts', 'status', 'next_attempt_at']).execute();
        assert.equal(rows.length, 10);
        for (const row of rows) assert.equal(row.attempts, calls.get(row.notification_id) ?? 0, `${row.notification_id}: attempts as made`);
        assert.ok(calls.size >= 1 && calls.size < 10, `some were attempted, the rest were never sent (${calls.size})`);
        // the ones never sent are pending and due (their claim gave back), not leased for 30 s
        const untouched = rows.filter((r) => !calls.has(r.notification_id));
        assert.ok(untouched.every((r) => r.status === 'pending' && new Date(r.next_attempt_at).getTime() <= Date.now()), 'given back, due as before');
      } finally {
        await db.dispose();
      }
    });

    if (engine.engine === 'postgres') {
      it('two dispatchers on one PostgreSQL deliver each notification once (FOR UPDATE SKIP LOCKED)', async () => {
        const server = await createTestPostgres();
        const db = await openDatabase({ kind: 'postgres', url: server.url });
        const second = await openDatabase({ kind: 'postgres', url: server.url });
        try {
          await migrateToLatest(db.db);
          await insertSubscription(db.db, { id: 'sub_1', account: ACCOUNT, channel: 'webhook', target: 'http://a', types: null, secret: 'whsec_x' });
          const shared: string[] = [];
          const slow = (): NotificationChannel => {
            const c = new TestChannel();
            c.deliver = async (n) => {
              await new Promise((r) => setTimeout(r, 2));
              shared.push(n.id);
              return { ok: true };
            };
            return c;
          };
          const a = dispatcher(db, slow());
          const b = dispatcher(second, slow());
          const abort = new AbortController();
          const runs = [a.run(abort.signal), b.run(abort.signal)];
          const total = 300;
          for (let i = 0; i < total; i += 50) await produce(db, Array.from({ length: 50 }, (_, k) => notification(i + k)));
          await until('all delivered', async () => (await statuses(db)).delivered === total, 60_000);
          abort.abort();
          await Promise.all(runs);
          assert.equal(shared.length, total, 'each delivered once');
          assert.equal(new Set(shared).size, total);
          assert.ok(a.counts.delivered > 0 && b.counts.delivered > 0, `both worked (${a.counts.delivered} + ${b.counts.delivered})`);
        } finally {
          await second.close();
          await db.close();
          await server.drop();
        }
      });
    }
  });
}
