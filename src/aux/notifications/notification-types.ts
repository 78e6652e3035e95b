/**
 * The six notification types (spec §3) and a notification as produced and stored. The wire shape (spec §2) is
 * `OutgoingNotification` of the delivery port; `toOutgoing` maps one onto the other.
 */
import type { Address } from 'viem';
import type { OutgoingNotification } from '../../notify/channels/channel.js';

export const NOTIFICATION_TYPES = [
  'order_filled',
  'order_partially_filled',
  'order_expired',
  'order_cancelled',
  'insufficient_balance',
  'price_improvement',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export interface ProducedNotification {
  /** deterministic: derived from the trigger (see notification-id.ts) */
  id: string;
  chainId: number;
  /** lowercase */
  account: Address;
  type: NotificationType;
  message: string;
  /** when the trigger happened */
  timestamp: Date;
  /** always `orderId` and `chainId` (a number) */
  metadata: Record<string, unknown> & { orderId: string; chainId: number };
}

export function toOutgoing(n: ProducedNotification): OutgoingNotification {
  return { id: n.id, account: n.account, type: n.type, message: n.message, timestamp: n.timestamp.toISOString(), metadata: n.metadata };
}
