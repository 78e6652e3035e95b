/**
 * Stored notifications: insertion together with their outbox rows (one delivery per matching subscription, in
 * the caller's transaction), and the per-account listing of the API.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Address } from 'viem';
import { toBytes } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { OutgoingNotification } from '../../notify/channels/channel.js';
import { rowToOutgoing } from '../../notify/outbox/notification-row.js';
import type { ProducedNotification } from './notification-types.js';

const CHUNK = 1000;

/** Of these ids, the ones already stored. */
export async function storedIds(db: Kysely<DB> | Transaction<DB>, ids: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    if (chunk.length === 0) continue;
    const rows = await db.selectFrom('notifications').select('id').where('id', 'in', chunk).execute();
    for (const r of rows) out.add(r.id);
  }
  return out;
}

/**
 * Stores the notifications not stored yet and, in the same transaction, one pending delivery per confirmed
 * subscription of the account that wants the type. Returns the ids newly stored and the number of deliveries written.
 */
export async function insertNotifications(trx: Transaction<DB>, notifications: ProducedNotification[]): Promise<{ inserted: string[]; deliveries: number }> {
  const inserted: string[] = [];
  let deliveries = 0;
  for (let i = 0; i < notifications.length; i += CHUNK) {
    const chunk = notifications.slice(i, i + CHUNK);
    if (chunk.length === 0) continue;
    const rows = await trx
      .insertInto('notifications')
      .values(
        chunk.map((n) => ({
          id: n.id,
          chain_id: n.chainId,
          account: toBytes(n.account),
          type: n.type,
          message: n.message,
          metadata: JSON.stringify(n.metadata),
          created_at: n.timestamp,
        })),
      )
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    const ids = rows.map((r) => r.id);
    inserted.push(...ids);
    if (ids.length === 0) continue;
    const result = await sql`
      insert into notification_deliveries (notification_id, subscription_id)
      select n.id, s.id from notifications n
      join notification_subscriptions s on s.account = n.account and (s.types is null or n.type = any (s.types)) and s.confirmed_at is not null
      where n.id in (${sql.join(ids)})
      on conflict do nothing`.execute(trx);
    deliveries += Number(result.numAffectedRows ?? 0n);
  }
  return { inserted, deliveries };
}

/** The account's notifications of every network, newest first. */
export async function listNotifications(db: Kysely<DB>, account: Address, limit: number, offset: number): Promise<OutgoingNotification[]> {
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'account', 'type', 'message', 'metadata', 'created_at'])
    .where('account', '=', toBytes(account))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(rowToOutgoing);
}
