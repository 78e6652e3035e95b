/** Subscriptions in the database: create (unique channel + target per account), list, delete. */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { toBytes } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { ChannelName } from '../../notify/channels/channel.js';

export interface StoredSubscription {
  id: string;
  channel: ChannelName;
  target: string;
  /** null: every type */
  types: string[] | null;
  createdAt: Date;
  lastError: string | null;
  lastErrorAt: Date | null;
  /** deliveries given up on (dead letters) */
  failedDeliveries: number;
  pendingDeliveries: number;
}

export class DuplicateSubscriptionError extends Error {}

/** A new subscription id: `sub_` + 24 hex characters (a string: what Unsubscribe signs and the DELETE path carries). */
export function newSubscriptionId(): string {
  return `sub_${randomBytes(12).toString('hex')}`;
}

export async function insertSubscription(
  db: Kysely<DB>,
  s: { id: string; account: Address; channel: ChannelName; target: string; types: string[] | null; secret: string | null },
): Promise<Date> {
  const row = await db
    .insertInto('notification_subscriptions')
    .values({ id: s.id, account: toBytes(s.account), channel: s.channel, target: s.target, types: s.types, secret: s.secret })
    .onConflict((oc) => oc.columns(['account', 'channel', 'target']).doNothing())
    .returning('created_at')
    .executeTakeFirst();
  if (!row) throw new DuplicateSubscriptionError();
  return new Date(row.created_at);
}

export async function listSubscriptions(db: Kysely<DB>, account: Address): Promise<StoredSubscription[]> {
  const { rows } = await sql<{ id: string; channel: ChannelName; target: string; types: string[] | null; created_at: Date | string; last_error: string | null; last_error_at: Date | string | null; dead: string | number; pending: string | number }>`
    select s.id, s.channel, s.target, s.types, s.created_at, s.last_error, s.last_error_at,
      (select count(*) from notification_deliveries d where d.subscription_id = s.id and d.status = 'dead') as dead,
      (select count(*) from notification_deliveries d where d.subscription_id = s.id and d.status in ('pending', 'queued')) as pending
    from notification_subscriptions s where s.account = ${toBytes(account)} order by s.created_at, s.id`.execute(db);
  return rows.map((r) => ({
    id: r.id,
    channel: r.channel,
    target: r.target,
    types: r.types,
    createdAt: new Date(r.created_at),
    lastError: r.last_error,
    lastErrorAt: r.last_error_at ? new Date(r.last_error_at) : null,
    failedDeliveries: Number(r.dead),
    pendingDeliveries: Number(r.pending),
  }));
}

/** True when it existed (its pending deliveries go with it). */
export async function deleteSubscription(db: Kysely<DB>, account: Address, id: string): Promise<boolean> {
  const result = await db.deleteFrom('notification_subscriptions').where('id', '=', id).where('account', '=', toBytes(account)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
