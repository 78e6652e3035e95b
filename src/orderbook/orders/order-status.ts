/**
 * The status of an order from what is stored and indexed (reference orderbook.md §9.1, precedence order):
 * fulfilled → cancelled → expired → presignaturePending → open. Partially filled orders stay open.
 */
import type { StoredOrder } from './order-repository.js';

export type OrderStatus = 'open' | 'fulfilled' | 'cancelled' | 'expired' | 'presignaturePending';

export function isFullyExecuted(order: Pick<StoredOrder, 'kind' | 'sellAmount' | 'buyAmount' | 'executedSell' | 'executedBuy' | 'executedFee'>): boolean {
  if (order.kind === 'sell') return order.sellAmount > 0n && order.executedSell - order.executedFee >= order.sellAmount;
  return order.buyAmount > 0n && order.executedBuy >= order.buyAmount;
}

export function isInvalidated(order: Pick<StoredOrder, 'cancelledAt' | 'invalidatedOnChain'>): boolean {
  return order.cancelledAt !== null || order.invalidatedOnChain;
}

export function orderStatus(order: StoredOrder, nowSeconds: number): OrderStatus {
  if (isFullyExecuted(order)) return 'fulfilled';
  if (isInvalidated(order)) return 'cancelled';
  if (order.validTo < nowSeconds) return 'expired';
  if (order.signingScheme === 'presign' && order.presigned !== true) return 'presignaturePending';
  return 'open';
}
