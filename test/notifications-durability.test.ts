/**
 * Durability of notification delivery with real processes (issue 11 §5): delivery processes (the outbox
 * dispatcher with the real webhook channel) on a real PostgreSQL, a real receiver that verifies signatures and
 * deduplicates on webhook-id. The delivering process is killed with kill -9 mid-delivery and a new one started:
 * every notification arrives, each webhook-id at least once and acted on once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Address } from 'viem';
import { createTestPostgres, type TestPostgres } from './fixtures/databases.js';
import { skipUnless } from './fixtures/required-services.js';
import { startWebhookReceiver, type WebhookReceiver } from './fixtures/webhook-receiver.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { insertNotifications } from '../src/aux/notifications/notification-store.js';
import { insertSubscription } from '../src/aux/notifications/subscription-store.js';
import { generateWebhookSecret } from '../src/notify/channels/webhook-channel.js';
import { waitFor } from './fixtures/trading.js';

const root = new URL('..', import.meta.url).pathname;
const ACCOUNT = `0x${'ab'.repeat(20)}` as Address;

function spawnDispatcher(url: string, leaseMs: number): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/notify-dispatcher-process.ts', url, String(leaseMs)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.includes('"ready"')) resolve(proc);
    });
    proc.once('exit', (code) => reject(new Error(`dispatcher exited with ${code}`)));
  });
}

describe('notification delivery survives kill -9 (real processes, PostgreSQL)', { skip: await skipUnless('postgres') }, () => {
  let server: TestPostgres;
  let database: Database;
  let receiver: WebhookReceiver;
  const children: ChildProcess[] = [];

  before(async () => {
    server = await createTestPostgres();
    database = await openDatabase({ kind: 'postgres', url: server.url });
    await migrateToLatest(database.db);
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await receiver?.close();
    await database?.close();
    await server?.drop();
  });

  it('kill -9 during delivery, restart: every notification delivered, each acted on once', async () => {
    const secret = generateWebhookSecret();
    receiver.setSecret('/hook', secret);
    receiver.setDelay(100); // deliveries stay in flight long enough to be cut
    await insertSubscription(database.db, { id: 'sub_durable', account: ACCOUNT, channel: 'webhook', target: `${receiver.url}/hook`, types: null, secret });
    const total = 120;
    await database.db.transaction().execute((trx) =>
      insertNotifications(
        trx,
        Array.from({ length: total }, (_, i) => ({
          id: `durable-${i}`,
          chainId: 31337,
          account: ACCOUNT,
          type: 'order_filled' as const,
          message: `fill ${i}`,
          timestamp: new Date(1_700_000_000_000 + i * 1000),
          metadata: { orderId: `0x${i.toString(16)}`, chainId: 31337 },
        })),
      ),
    );

    const first = await spawnDispatcher(server.url, 1500);
    children.push(first);
    await waitFor('some deliveries', async () => receiver.received.length >= 20);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    const cut = receiver.received.length;
    assert.ok(cut < total, `killed mid-way (${cut} of ${total} arrived)`);
    const pending = await database.db.selectFrom('notification_deliveries').select('notification_id').where('status', '=', 'pending').execute();
    assert.ok(pending.length > 0, 'work left behind');

    const second = await spawnDispatcher(server.url, 1500);
    children.push(second);
    await waitFor('every notification delivered', async () => {
      const rows = await database.db.selectFrom('notification_deliveries').select('status').where('status', '!=', 'delivered').execute();
      return rows.length === 0;
    }, 120_000);
    second.kill('SIGTERM');
    assert.equal(receiver.received.length, total, 'each webhook-id acted on once');
    assert.deepEqual(new Set(receiver.received.map((r) => r.id)), new Set(Array.from({ length: total }, (_, i) => `durable-${i}`)));
    assert.ok(receiver.requests >= total, `at least once (${receiver.requests} requests)`);
    assert.equal(receiver.rejected, 0, 'every signature verified');
  });
});
