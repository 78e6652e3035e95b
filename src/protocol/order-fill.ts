/**
 * How far an order is filled, defined once (the order status, cancellations, the auction and the notifications
 * use it; db/order-fill-sql.ts is its SQL twin). A sell order's limit is its sell amount, counted before fees
 * (executed sell − executed fee); a buy order's limit is its buy amount.
 *
 * @example
 *   executedAmount({ kind: 'sell', executedSell: 105n, executedBuy: 200n, executedFee: 5n }) // 100n
 *   isFullyExecuted({ kind: 'buy', sellAmount: 10n, buyAmount: 200n, executedSell: 9n, executedBuy: 200n, executedFee: 0n }) // true
 */
export interface OrderFill {
  kind: 'sell' | 'buy';
  sellAmount: bigint;
  buyAmount: bigint;
  /** Σ sell amounts of its trades, fees included */
  executedSell: bigint;
  executedBuy: bigint;
  executedFee: bigint;
}

/** What the order has executed in its limit's unit: sell amount before fees (sell orders) or buy amount (buy orders). */
export function executedAmount(fill: Pick<OrderFill, 'kind' | 'executedSell' | 'executedBuy' | 'executedFee'>): bigint {
  return fill.kind === 'sell' ? fill.executedSell - fill.executedFee : fill.executedBuy;
}

/** What the order may still be filled by, in its limit's unit; never negative. */
export function remainingAmount(fill: OrderFill): bigint {
  const left = (fill.kind === 'sell' ? fill.sellAmount : fill.buyAmount) - executedAmount(fill);
  return left > 0n ? left : 0n;
}

/** Filled up to its limit (an order with a zero limit never is). */
export function isFullyExecuted(fill: OrderFill): boolean {
  const limit = fill.kind === 'sell' ? fill.sellAmount : fill.buyAmount;
  return limit > 0n && executedAmount(fill) >= limit;
}
