/**
 * Delivery through RabbitMQ (with AMQP_URL): a relay moves due outbox rows into the durable queue and delivery
 * workers consume it. The relay leases due rows (as the database dispatcher does), publishes each one and waits
 * for the broker's confirm, and only then marks the row `queued`; a crash in between leaves the row pending, so
 * it is published again after its lease (a duplicate, never a loss). A worker loads the row, makes the delivery
 * attempt, records its outcome (delivered, retried later through the outbox with backoff, or dead) and only then
 * acks. A message that is not a delivery key (a poison message) goes to the dead-letter queue; a failure to
 * record (the database is away) requeues the message.
 *
 * @example
 *   const delivery = new AmqpDelivery({ db, queue, attempt: { db, channels, policy }, leaseMs, pollIntervalMs, batch: 16 });
 *   void delivery.run(signal);
 *   delivery.wake();
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { attemptDelivery, type AttemptDeps, type AttemptOutcome } from '../outbox/delivery-attempt.js';
import { claimDue, loadDeliveries, type DeliveryKey, type LeasedKey } from '../outbox/delivery-store.js';
import { WakeUp } from '../outbox/wake-up.js';
import type { ConsumeDecision, QueuedMessage } from './amqp-queue.js';

/** The part of AmqpQueue the relay and the workers use. */
export interface DeliveryQueue {
  publish(body: string, properties: { messageId: string }): Promise<void>;
  consume(handler: (message: QueuedMessage) => Promise<ConsumeDecision>): Promise<void>;
  close(): Promise<void>;
}

export interface AmqpDeliveryLogger {
  warn(obj: object, msg?: string): void;
}

export interface AmqpDeliveryOptions {
  db: Kysely<DB>;
  queue: DeliveryQueue;
  attempt: AttemptDeps;
  leaseMs: number;
  pollIntervalMs: number;
  /** rows relayed per round */
  batch: number;
  /** a queued row without an outcome is relayed again after this (default: 10 leases) */
  requeueAfterMs?: number;
  /** a worker that cannot reach the database waits this long before its message is requeued, doubling up to 5 s (default 100 ms) */
  databaseRetryMs?: number;
  logger?: AmqpDeliveryLogger;
}

/**
 * The broker confirmed the message: the row is `queued`, unless a worker already recorded an outcome. A queued row
 * is due again (relayed anew) once `requeueAfterMs` passes without an outcome, so a message the broker lost never
 * strands its row; a worker recording the outcome first makes the second message a no-op.
 */
async function markQueued(db: Kysely<DB>, key: LeasedKey, requeueAfterMs: number): Promise<void> {
  await sql`
    update notification_deliveries set status = 'queued', next_attempt_at = now() + make_interval(secs => ${requeueAfterMs / 1000})
    where notification_id = ${key.notificationId} and subscription_id = ${key.subscriptionId}
      and status = 'pending' and next_attempt_at = ${key.lease}::timestamptz`.execute(db);
}

async function currentStatus(db: Kysely<DB>, key: DeliveryKey): Promise<string | null> {
  const row = await db
    .selectFrom('notification_deliveries')
    .select('status')
    .where('notification_id', '=', key.notificationId)
    .where('subscription_id', '=', key.subscriptionId)
    .executeTakeFirst();
  return row?.status ?? null;
}

export function parseDeliveryKey(body: Buffer): DeliveryKey | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const { notificationId, subscriptionId } = value as Record<string, unknown>;
    if (typeof notificationId !== 'string' || typeof subscriptionId !== 'string' || !notificationId || !subscriptionId) return null;
    return { notificationId, subscriptionId };
  } catch {
    return null;
  }
}

export class AmqpDelivery {
  private readonly wakeUp = new WakeUp();
  readonly counts: Record<AttemptOutcome | 'published' | 'poison' | 'requeued', number> = { delivered: 0, retry: 0, dead: 0, gone: 0, published: 0, poison: 0, requeued: 0 };
  /** database failures in a row seen by the workers: each requeue waits longer (no hot loop while it is down) */
  private databaseFailures = 0;

  constructor(private readonly options: AmqpDeliveryOptions) {}

  wake(): void {
    this.wakeUp.wake();
  }

  /** Publishes one batch of due rows; returns how many were leased. A row whose publish fails stays pending. */
  async relayOnce(): Promise<number> {
    const keys = await claimDue(this.options.db, this.options.batch, this.options.leaseMs);
    await Promise.all(
      keys.map(async (key) => {
        try {
          await this.options.queue.publish(JSON.stringify({ notificationId: key.notificationId, subscriptionId: key.subscriptionId }), { messageId: `${key.notificationId}/${key.subscriptionId}` });
        } catch (err) {
          this.options.logger?.warn({ err: (err as Error).message }, 'notifications: publishing to RabbitMQ failed; the delivery is relayed again after its lease');
          return;
        }
        this.counts.published++;
        await markQueued(this.options.db, key, this.options.requeueAfterMs ?? this.options.leaseMs * 10);
      }),
    );
    return keys.length;
  }

  /** One consumed message: the attempt's outcome is recorded before the ack. */
  async handle(message: QueuedMessage): Promise<ConsumeDecision> {
    const key = parseDeliveryKey(message.body);
    if (key === null) {
      this.counts.poison++;
      this.options.logger?.warn({ messageId: message.messageId }, 'notifications: not a delivery key; dead-lettered');
      return 'dead-letter';
    }
    try {
      const status = await currentStatus(this.options.db, key);
      if (status === null || status === 'delivered' || status === 'dead') return 'ack'; // gone, or a duplicate
      const [delivery] = await loadDeliveries(this.options.db, [key]);
      if (!delivery) return 'ack'; // its subscription is gone
      this.counts[await attemptDelivery(this.options.attempt, delivery)]++;
      this.databaseFailures = 0;
      return 'ack';
    } catch (err) {
      this.databaseFailures++;
      const waitMs = Math.min(5_000, (this.options.databaseRetryMs ?? 100) * 2 ** Math.min(this.databaseFailures - 1, 16));
      this.options.logger?.warn({ err: (err as Error).message, waitMs }, 'notifications: recording a delivery failed; the message is requeued after a pause');
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      this.counts.requeued++;
      return 'requeue';
    }
  }

  /** Starts the workers, then relays until the signal aborts; closes the queue at the end. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.options.queue.consume((m) => this.handle(m));
      await this.relayLoop(signal);
    } finally {
      await this.options.queue.close();
    }
  }

  private async relayLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let leased = 0;
      try {
        this.wakeUp.clear();
        leased = await this.relayOnce();
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message }, 'notifications: relay failed; retrying');
      }
      if (leased > 0 || signal.aborted || this.wakeUp.pending) continue;
      await this.wakeUp.sleep(this.options.pollIntervalMs, signal);
    }
  }
}
