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

/** How a dispatcher shares its slots (issue 19, major 6). */
export interface ClaimOptions {
  /** subscriptions none of whose deliveries may be claimed now (a suspect one in flight, or as many as allowed) */
  busy: string[];
  /** at most this many of one healthy subscription's deliveries per claim; a suspect subscription gets one */
  perSubscription: number;
  /**
   * at most this many of the claimed rows may be suspect: a retry, or a delivery to a subscription whose last
   * attempt failed. Fresh deliveries to healthy subscriptions come first and are never held back by them.
   */
  suspectLimit: number;
}

/** A claimed delivery's key and lease, and whether it was suspect when claimed. */
export interface ClaimedKey extends LeasedKey {
  suspect: boolean;
}

/**
 * Claims up to `limit` due pending deliveries: they are not due again before `leaseMs` has passed (a dispatcher
 * delivers them itself; the RabbitMQ relay marks them `queued` once their message is confirmed). Without
 * `options` (the relay) a queued row whose time has come is due again too: its message was lost. Deliveries of a
 * subscription whose circuit breaker is open (`paused_until` ahead) are not due. With `options` (the dispatcher):
 * none of a busy subscription, at most `perSubscription` of a healthy one and one of a suspect one, fresh
 * deliveries to healthy subscriptions first and at most `suspectLimit` suspect ones.
 */
export async function claimDue(db: Kysely<DB>, limit: number, leaseMs: number, options?: ClaimOptions): Promise<ClaimedKey[]> {
  if (limit <= 0) return [];
  const lease = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
  const query = options
    ? sql<{ notification_id: string; subscription_id: string; lease: string; suspect: boolean }>`
    with ${chosenForDispatcher(limit, options)}
    update notification_deliveries d
    set next_attempt_at = ${lease}, attempts = d.attempts + 1
    from chosen where d.notification_id = chosen.notification_id and d.subscription_id = chosen.subscription_id
    returning d.notification_id, d.subscription_id, d.next_attempt_at::text as lease, chosen.suspect`
    : sql<{ notification_id: string; subscription_id: string; lease: string; suspect: boolean }>`
    with fresh as (${relayCandidates(sql`d.status = 'pending' and d.attempts = 0`, limit)}),
    retries as (${relayCandidates(sql`d.status = 'pending' and d.attempts > 0`, limit)}),
    queued as (${relayCandidates(sql`d.status = 'queued'`, limit)}),
    due as (
      select notification_id, subscription_id from (select * from fresh union all select * from retries union all select * from queued) candidates
      order by next_attempt_at
      limit ${limit})
    update notification_deliveries d
    set next_attempt_at = ${lease}, attempts = d.attempts + 1
    from due where d.notification_id = due.notification_id and d.subscription_id = due.subscription_id
    returning d.notification_id, d.subscription_id, d.next_attempt_at::text as lease, false as suspect`;
  const { rows } = await query.execute(db);
  return rows.map((r) => ({ notificationId: r.notification_id, subscriptionId: r.subscription_id, lease: r.lease, suspect: Boolean(r.suspect) }));
}

/** The relay's due rows of one kind (fresh, retry or queued: each has its partial index in due order). */
function relayCandidates(kind: ReturnType<typeof sql>, limit: number) {
  return sql`select d.notification_id, d.subscription_id, d.next_attempt_at from notification_deliveries d
    where ${kind} and d.next_attempt_at <= now()
      and not exists (select 1 from notification_subscriptions s where s.id = d.subscription_id and s.paused_until > now())
    order by d.next_attempt_at
    limit ${limit}
    for update of d skip locked`;
}

/**
 * The dispatcher's choice of due rows (CTEs ending in `chosen`): see claimDue. The candidates come from three
 * places, each read in due order only as far as needed: fresh deliveries to healthy subscriptions, retries, and
 * the first due delivery of each failing subscription (suspect ones only while `suspectLimit` allows any).
 */
function chosenForDispatcher(limit: number, options: ClaimOptions) {
  const open = sql`(s.paused_until is null or s.paused_until <= now())`;
  const notBusy = sql`not (d.subscription_id = any (${options.busy}::text[]))`;
  const candidates = options.perSubscription >= limit ? limit : limit * 4;
  const suspects = options.suspectLimit > 0;
  return sql`fresh as (
      select d.ctid, d.notification_id, d.subscription_id, d.next_attempt_at, false as suspect
      from notification_deliveries d join notification_subscriptions s on s.id = d.subscription_id
      where d.status = 'pending' and d.attempts = 0 and d.next_attempt_at <= now()
        and s.consecutive_failures = 0 and ${open} and ${notBusy}
      order by d.next_attempt_at
      limit ${candidates}
      for update of d skip locked),
    retries as (
      select d.ctid, d.notification_id, d.subscription_id, d.next_attempt_at, true as suspect
      from notification_deliveries d join notification_subscriptions s on s.id = d.subscription_id
      where ${suspects} and d.status = 'pending' and d.attempts > 0 and d.next_attempt_at <= now() and ${open} and ${notBusy}
      order by d.next_attempt_at
      limit ${limit * 4}
      for update of d skip locked),
    failing as (
      select f.* from notification_subscriptions s cross join lateral (
        select d.ctid, d.notification_id, d.subscription_id, d.next_attempt_at, true as suspect
        from notification_deliveries d
        where d.subscription_id = s.id and d.status = 'pending' and d.next_attempt_at <= now()
        order by d.next_attempt_at
        limit 1
        for update of d skip locked) f
      where ${suspects} and s.consecutive_failures > 0 and ${open} and not (s.id = any (${options.busy}::text[]))),
    due as (
      select * from fresh union all select * from retries union all select * from failing),
    numbered as (
      select *, row_number() over (partition by subscription_id order by suspect, next_attempt_at) as nth from due),
    eligible as (
      select * from numbered where nth <= case when suspect then 1 else ${options.perSubscription} end),
    ranked as (
      select *, row_number() over (partition by suspect order by next_attempt_at) as rank from eligible),
    chosen as (
      select * from ranked where not suspect or rank <= ${options.suspectLimit} order by suspect, next_attempt_at limit ${limit})`;
}

/** A claimed delivery with what its channel needs, and what it takes to give it back unstarted. */
export interface LoadedClaim extends ClaimedDelivery {
  lease: string;
  suspect: boolean;
  /** when it was due before the claim (text: microseconds kept), restored when it is released unstarted */
  dueAt: string;
}

/**
 * claimDue (with the dispatcher's options) and loadDeliveries in one statement: the claimed rows come back with
 * their notification and subscription, fresh ones first, then by when they were due. `delivered` are written as
 * markDeliveredMany does, in the same statement.
 */
export async function claimDeliveries(db: Kysely<DB>, limit: number, leaseMs: number, options: ClaimOptions, delivered: DeliveryKey[] = []): Promise<LoadedClaim[]> {
  if (limit <= 0) {
    await markDeliveredMany(db, delivered);
    return [];
  }
  const lease = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
  const { rows } = await sql<{
    notification_id: string; subscription_id: string; lease: string; due_at: string; suspect: boolean; attempts: number; d_created: Date | string;
    id: string; account: Uint8Array; type: string; message: string; metadata: unknown; created_at: Date | string;
    channel: ChannelName; target: string; secret: string | null;
  }>`
    with ${delivered.length > 0 ? sql`${deliveredCtes(delivered)},` : sql``} ${chosenForDispatcher(limit, options)},
    claimed as (
      -- by row address: the chosen rows are locked by this statement, so they are where they were read
      update notification_deliveries d
      set next_attempt_at = ${lease}, attempts = d.attempts + 1
      where d.ctid = any (array(select ctid from chosen))
      returning d.notification_id, d.subscription_id, d.next_attempt_at::text as lease, d.attempts, d.created_at as d_created)
    select c.*, chosen.next_attempt_at::text as due_at, chosen.suspect,
      n.id, n.account, n.type, n.message, n.metadata, n.created_at, s.channel, s.target, s.secret
    from claimed c
      join chosen on chosen.notification_id = c.notification_id and chosen.subscription_id = c.subscription_id
      join notifications n on n.id = c.notification_id
      join notification_subscriptions s on s.id = c.subscription_id`.execute(db);
  return rows
    .map((r) => ({
      ...claimedDeliveryOf(r),
      lease: r.lease,
      suspect: Boolean(r.suspect),
      dueAt: r.due_at,
    }))
    .sort(claimOrder);
}

/** Fresh first, then by when they were due (timestamptz text in one zone sorts as time). */
export function claimOrder(a: { suspect: boolean; dueAt: string }, b: { suspect: boolean; dueAt: string }): number {
  if (a.suspect !== b.suspect) return a.suspect ? 1 : -1;
  return a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0;
}

/**
 * Gives back claimed deliveries that were never started: due again when they were due before, their attempt
 * not counted. Only a row still under this claim's lease is touched (a row whose lease ran out may be someone
 * else's now).
 */
export async function releaseClaims(db: Kysely<DB>, claims: Array<Pick<LoadedClaim, 'notificationId' | 'subscriptionId' | 'lease' | 'dueAt'>>): Promise<void> {
  if (claims.length === 0) return;
  await sql`
    update notification_deliveries d
    set next_attempt_at = k.due_at::timestamptz, attempts = greatest(d.attempts - 1, 0)
    from unnest(${claims.map((c) => c.notificationId)}::text[], ${claims.map((c) => c.subscriptionId)}::text[],
      ${claims.map((c) => c.lease)}::text[], ${claims.map((c) => c.dueAt)}::text[]) as k(notification_id, subscription_id, lease, due_at)
    where d.notification_id = k.notification_id and d.subscription_id = k.subscription_id
      and d.status = 'pending' and d.next_attempt_at = k.lease::timestamptz`.execute(db);
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
  return rows.map(claimedDeliveryOf);
}

/** A delivery row joined to its notification and subscription, as the channels take it. */
type DeliveryRow = Parameters<typeof rowToOutgoing>[0] & {
  notification_id: string; subscription_id: string; attempts: number; d_created: Date | string;
  channel: ChannelName; target: string; secret: string | null;
};

function claimedDeliveryOf(r: DeliveryRow): ClaimedDelivery {
  return {
    notificationId: r.notification_id,
    subscriptionId: r.subscription_id,
    attempts: Number(r.attempts),
    createdAt: new Date(r.d_created),
    notification: rowToOutgoing(r),
    target: { subscriptionId: r.subscription_id, channel: r.channel, target: r.target, secret: r.secret },
  };
}

/** Delivered: the subscription's circuit breaker closes (in the same statement, written only when it was open). */
export async function markDelivered(db: Kysely<DB>, key: DeliveryKey): Promise<void> {
  await markDeliveredMany(db, [key]);
}

/** markDelivered for several deliveries in one statement. */
export async function markDeliveredMany(db: Kysely<DB>, keys: DeliveryKey[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`with ${deliveredCtes(keys)} select 1`.execute(db);
}

/**
 * markDeliveredMany as CTEs (`delivered`, `breakers_closed`) to lead another statement. The pairs are joined
 * to the primary key (without statistics, PGlite's planner would read `notification_id = any(...)` as a share of
 * the whole table and scan it all).
 */
function deliveredCtes(keys: DeliveryKey[]) {
  return sql`delivered as (
      update notification_deliveries d set status = 'delivered', delivered_at = now(), last_error = null
      from unnest(${keys.map((k) => k.notificationId)}::text[], ${keys.map((k) => k.subscriptionId)}::text[]) as k(notification_id, subscription_id)
      where d.notification_id = k.notification_id and d.subscription_id = k.subscription_id and d.status in ('pending', 'queued')
      returning d.subscription_id),
    breakers_closed as (
      update notification_subscriptions s set consecutive_failures = 0, paused_until = null
      where s.id in (select subscription_id from delivered) and (s.consecutive_failures > 0 or s.paused_until is not null))`;
}

/** The circuit breaker of each subscription: after this many failed attempts in a row its deliveries pause. */
export interface BreakerPolicy {
  /** failures in a row that open it */
  threshold: number;
  /** the first pause; each further failure doubles it */
  pauseMs: number;
  /** the longest pause */
  maxPauseMs: number;
}

export const DEFAULT_BREAKER: BreakerPolicy = { threshold: 3, pauseMs: 30_000, maxPauseMs: 600_000 };

/**
 * A failed attempt: retried after `retryInMs`, or dead-lettered (`retryInMs` null); the subscription shows the
 * error and counts the failure: from `breaker.threshold` failures in a row its deliveries pause (the breaker
 * opens), for a time that doubles with each further failure, up to `breaker.maxPauseMs`.
 */
export async function markFailed(db: Kysely<DB>, key: DeliveryKey, error: string, retryInMs: number | null, breaker: BreakerPolicy = DEFAULT_BREAKER): Promise<void> {
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
    const lastError = retryInMs === null ? `${error} (gave up on notification ${key.notificationId})` : error;
    await sql`
      update notification_subscriptions
      set last_error = ${lastError}, last_error_at = now(), consecutive_failures = consecutive_failures + 1,
        paused_until = case when consecutive_failures + 1 >= ${breaker.threshold}
          then now() + make_interval(secs => least(${breaker.maxPauseMs / 1000}::float8, ${breaker.pauseMs / 1000}::float8 * power(2, least(consecutive_failures + 1 - ${breaker.threshold}, 30))))
          else paused_until end
      where id = ${key.subscriptionId}`.execute(trx);
  });
}

/** The target no longer exists (web push 404/410): the subscription and its deliveries go. */
export async function removeSubscription(db: Kysely<DB>, subscriptionId: string): Promise<void> {
  await db.deleteFrom('notification_subscriptions').where('id', '=', subscriptionId).execute();
}
