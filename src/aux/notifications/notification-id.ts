/**
 * Deterministic notification ids: the keccak-256 of the type and the trigger, so that producing a notification
 * twice (a restart, a rescan, two producers) stores it once, and a webhook receiver can deduplicate on it.
 *
 * @example
 *   notificationId('order_filled', 31337, uid, txHash, 7) // fill of `uid` by the Trade log 7 of `txHash`
 *   notificationId('order_expired', 31337, uid)           // an order expires once
 */
import { keccak256, stringToHex } from 'viem';
import type { NotificationType } from './notification-types.js';

export function notificationId(type: NotificationType, chainId: number, orderUid: string, ...trigger: Array<string | number>): string {
  return keccak256(stringToHex([type, chainId, orderUid.toLowerCase(), ...trigger.map((t) => String(t).toLowerCase())].join(':')));
}
