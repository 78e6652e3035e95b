/**
 * The delivery outbox in the database: claiming due rows (FOR UPDATE SKIP LOCKED, then leased by pushing their
 * next attempt past the lease, so replicas never take the same row and a vanished dispatcher's rows come back),
 * loading what a channel needs, and recording each outcome.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { rowToOutgoing } from './notification-row.js';
import type { ChannelName, DeliveryTarget, OutgoingNotification } from '../channels/channel.js';

export interface DeliveryKey {
  notificationId: string;
  subscriptionId: string;
}

export interface ClaimedDelivery extends DeliveryKey {
  /** attempts including this one */
  attempts: number;
  createdAt: Date;
  notification: OutgoingNotification;
  target: DeliveryTarget;
}

/** A claimed delivery's key and its lease (as the database wrote it: text keeps the microseconds, so a later
 * update can match this lease only). */
export interface LeasedKey extends DeliveryKey {
  lease: string;
}

/**
 * Claims up to `limit` due pending deliveries: they are not due again before `leaseMs` has passed (a dispatcher
 * delivers them itself; the RabbitMQ relay marks them `queued` once their message is confirmed).
 */
export async function claimDue(db: Kysely<DB>, limit: number, leaseMs: number): Promise<LeasedKey[]> {
  const { rows } = await sql<{ notification_id: string; subscription_id: string; lease: string }>`
    with due as (
      select notification_id, subscription_id from notification_deliveries
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked)
    update notification_deliveries d
    set next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}), attempts = d.attempts + 1
    from due where d.notification_id = due.notification_id and d.subscription_id = due.subscription_id
    returning d.notification_id, d.subscription_id, d.next_attempt_at::text as lease`.execute(db);
  return rows.map((r) => ({ notificationId: r.notification_id, subscriptionId: r.subscription_id, lease: r.lease }));
}

/** What the channels need for these deliveries (deliveries whose subscription is gone are left out). */
export async function loadDeliveries(db: Kysely<DB>, keys: DeliveryKey[]): Promise<ClaimedDelivery[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<{
    notification_id: string; subscription_id: string; attempts: number; d_created: Date | string;
    id: string; account: Uint8Array; type: string; message: string; metadata: unknown; created_at: Date | string;
    channel: ChannelName; target: string; secret: string | null;
  }>`
    select d.notification_id, d.subscription_id, d.attempts, d.created_at as d_created,
      n.id, n.account, n.type, n.message, n.metadata, n.created_at, s.channel, s.target, s.secret
    from notification_deliveries d
    join notifications n on n.id = d.notification_id
    join notification_subscriptions s on s.id = d.subscription_id
    where (d.notification_id, d.subscription_id) in (${sql.join(keys.map((k) => sql`(${k.notificationId}, ${k.subscriptionId})`))})`.execute(db);
  return rows.map((r) => ({
    notificationId: r.notification_id,
    subscriptionId: r.subscription_id,
    attempts: Number(r.attempts),
    createdAt: new Date(r.d_created),
    notification: rowToOutgoing(r),
    target: { subscriptionId: r.subscription_id, channel: r.channel, target: r.target, secret: r.secret },
  }));
}

export async function markDelivered(db: Kysely<DB>, key: DeliveryKey): Promise<void> {
  await db
    .updateTable('notification_deliveries')
    .set({ status: 'delivered', delivered_at: sql`now()` as unknown as Date, last_error: null })
    .where('notification_id', '=', key.notificationId)
    .where('subscription_id', '=', key.subscriptionId)
    .where('status', 'in', ['pending', 'queued'])
    .execute();
}

/** A failed attempt: retried after `retryInMs`, or dead-lettered (`retryInMs` null); the subscription shows the error. */
export async function markFailed(db: Kysely<DB>, key: DeliveryKey, error: string, retryInMs: number | null): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('notification_deliveries')
      .set(
        retryInMs === null
          ? { status: 'dead', last_error: error }
          : { status: 'pending', last_error: error, next_attempt_at: sql`now() + make_interval(secs => ${retryInMs / 1000})` as unknown as Date },
      )
      .where('notification_id', '=', key.notificationId)
      .where('subscription_id', '=', key.subscriptionId)
      .where('status', 'in', ['pending', 'queued'])
      .execute();
    await trx
      .updateTable('notification_subscriptions')
      .set({ last_error: retryInMs === null ? `${error} (gave up on notification ${key.notificationId})` : error, last_error_at: sql`now()` as unknown as Date })
      .where('id', '=', key.subscriptionId)
      .execute();
  });
}

/** The target no longer exists (web push 404/410): the subscription and its deliveries go. */
export async function removeSubscription(db: Kysely<DB>, subscriptionId: string): Promise<void> {
  await db.deleteFrom('notification_subscriptions').where('id', '=', subscriptionId).execute();
}
