/** Subscriptions in the database: create (unique channel + target per account), list, delete. */
import { randomBytes, timingSafeEqual } from 'node:crypto';
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
  /** deliveries start once confirmed (an email address confirms with the code mailed to it) */
  confirmed: boolean;
}

export class DuplicateSubscriptionError extends Error {}

/** The account already has MAX_SUBSCRIPTIONS_PER_ACCOUNT subscriptions. */
export class SubscriptionLimitError extends Error {}

export const MAX_SUBSCRIPTIONS_PER_ACCOUNT = 10;

/** A new subscription id: `sub_` + 24 hex characters (a string: what Unsubscribe signs and the DELETE path carries). */
export function newSubscriptionId(): string {
  return `sub_${randomBytes(12).toString('hex')}`;
}

/**
 * Stores a subscription; with a confirmation code it stays unconfirmed (no deliveries) until `confirmSubscription`.
 * At most MAX_SUBSCRIPTIONS_PER_ACCOUNT per account: counted and inserted under a lock of the account, so
 * concurrent requests cannot pass the cap together.
 */
export async function insertSubscription(
  db: Kysely<DB>,
  s: { id: string; account: Address; channel: ChannelName; target: string; types: string[] | null; secret: string | null; confirmationCode?: string | null },
): Promise<Date> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`notification_subscriptions:${s.account.toLowerCase()}`}))`.execute(trx);
    const { n } = await trx.selectFrom('notification_subscriptions').select((eb) => eb.fn.countAll<string | number>().as('n')).where('account', '=', toBytes(s.account)).executeTakeFirstOrThrow();
    if (Number(n) >= MAX_SUBSCRIPTIONS_PER_ACCOUNT) throw new SubscriptionLimitError();
    const code = s.confirmationCode ?? null;
    const row = await trx
      .insertInto('notification_subscriptions')
      .values({ id: s.id, account: toBytes(s.account), channel: s.channel, target: s.target, types: s.types, secret: s.secret, confirmation_code: code, confirmed_at: code === null ? (sql`now()` as unknown as Date) : null })
      .onConflict((oc) => oc.columns(['account', 'channel', 'target']).doNothing())
      .returning('created_at')
      .executeTakeFirst();
    if (!row) throw new DuplicateSubscriptionError();
    return new Date(row.created_at);
  });
}

/** 'confirmed' (now or before), 'wrong' code, or 'missing' subscription. The code is compared in constant time. */
export async function confirmSubscription(db: Kysely<DB>, account: Address, id: string, code: string): Promise<'confirmed' | 'wrong' | 'missing'> {
  const row = await db.selectFrom('notification_subscriptions').select(['confirmed_at', 'confirmation_code']).where('id', '=', id).where('account', '=', toBytes(account)).executeTakeFirst();
  if (!row) return 'missing';
  if (row.confirmed_at !== null) return 'confirmed';
  const expected = Buffer.from(row.confirmation_code ?? '');
  const given = Buffer.from(code);
  if (expected.length === 0 || expected.length !== given.length || !timingSafeEqual(expected, given)) return 'wrong';
  await db.updateTable('notification_subscriptions').set({ confirmed_at: sql`now()` as unknown as Date, confirmation_code: null }).where('id', '=', id).where('confirmed_at', 'is', null).execute();
  return 'confirmed';
}

export async function listSubscriptions(db: Kysely<DB>, account: Address): Promise<StoredSubscription[]> {
  const { rows } = await sql<{ id: string; channel: ChannelName; target: string; types: string[] | null; created_at: Date | string; last_error: string | null; last_error_at: Date | string | null; dead: string | number; pending: string | number; confirmed: boolean }>`
    select s.id, s.channel, s.target, s.types, s.created_at, s.last_error, s.last_error_at, s.confirmed_at is not null as confirmed,
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
    confirmed: Boolean(r.confirmed),
  }));
}

/** True when it existed (its pending deliveries go with it). */
export async function deleteSubscription(db: Kysely<DB>, account: Address, id: string): Promise<boolean> {
  const result = await db.deleteFrom('notification_subscriptions').where('id', '=', id).where('account', '=', toBytes(account)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
