/**
 * The status of an order from what is stored and indexed (reference orderbook.md §9.1, precedence order):
 * fulfilled → cancelled → expired → presignaturePending → open. Partially filled orders stay open.
 * A presign order still waiting for its on-chain signature PRESIGN_PENDING_EXPIRY_S after its creation has
 * expired (anyone may post one in any owner's name; stale ones must not linger).
 */
import { isFullyExecuted } from '../../protocol/index.js';
import type { StoredOrder } from './order-repository.js';

export { isFullyExecuted };

/** how long an unsigned presign order waits for `setPreSignature` before it expires (7 days) */
export const PRESIGN_PENDING_EXPIRY_S = 7 * 86400;

export type OrderStatus = 'open' | 'fulfilled' | 'cancelled' | 'expired' | 'presignaturePending';

export function isInvalidated(order: Pick<StoredOrder, 'cancelledAt' | 'invalidatedOnChain' | 'ethflow'>): boolean {
  return order.cancelledAt !== null || order.invalidatedOnChain || order.ethflow?.invalidated === true;
}

/** When the order stops being tradable: an eth-flow order's user deadline (its signed validTo never comes). */
export function effectiveValidTo(order: Pick<StoredOrder, 'validTo' | 'ethflow'>): number {
  return order.ethflow ? order.ethflow.userValidTo : order.validTo;
}

export function orderStatus(order: StoredOrder, nowSeconds: number): OrderStatus {
  if (isFullyExecuted(order)) return 'fulfilled';
  if (isInvalidated(order)) return 'cancelled';
  if (effectiveValidTo(order) < nowSeconds) return 'expired';
  if (order.signingScheme === 'presign' && order.presigned !== true) {
    return order.createdAt.getTime() / 1000 + PRESIGN_PENDING_EXPIRY_S < nowSeconds ? 'expired' : 'presignaturePending';
  }
  return 'open';
}
