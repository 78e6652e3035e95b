/**
 * The order book's domain error: the spec/upstream `errorType`, a human description and optional `data`.
 * Services and estimators throw it; they know nothing of HTTP. The HTTP layer (http/errors.ts
 * `orderBookErrorStatus`) decides the status code from the `errorType`.
 */
export class OrderBookError extends Error {
  readonly data?: unknown;

  constructor(
    readonly errorType: string,
    readonly description: string,
    options: { data?: unknown } = {},
  ) {
    super(`${errorType}: ${description}`);
    this.name = 'OrderBookError';
    this.data = options.data;
  }
}

/** True when `err` is an order-book error of this `errorType` (e.g. `'NoLiquidity'`). */
export function isOrderBookError(err: unknown, errorType: string): err is OrderBookError {
  return err instanceof OrderBookError && err.errorType === errorType;
}
