/** A stored notification's row (table `notifications`) as a channel sends it. */
import { toHex } from '../../db/codec.js';
import type { OutgoingNotification } from '../channels/channel.js';

export interface NotificationRow {
  id: string;
  account: Uint8Array;
  type: string;
  message: string;
  metadata: unknown;
  created_at: Date | string;
}

/** The row as the channels' `OutgoingNotification` (metadata parsed when the driver returns it as text). */
export function rowToOutgoing(row: NotificationRow): OutgoingNotification {
  const metadata = typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : (row.metadata as Record<string, unknown>);
  return { id: row.id, account: toHex(row.account), type: row.type, message: row.message, timestamp: new Date(row.created_at).toISOString(), metadata };
}
