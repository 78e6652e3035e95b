/**
 * The two error envelopes and the domain errors that map onto them.
 * - order book: `{errorType, description, data?}` (spec §2 "Error body")
 * - auxiliary API: `{message}`
 * Services throw domain errors (orderbook/order-book-error.ts); the one Fastify error handler (http/server.ts)
 * turns them into responses with the statuses below.
 */

/**
 * The HTTP status of each order-book `errorType` the services throw (`OrderBookError` of
 * orderbook/order-book-error.ts); every type not listed is a client mistake: 400.
 */
const ORDER_BOOK_ERROR_STATUS: Readonly<Record<string, number>> = {
  WrongOwner: 401,
  Forbidden: 403,
  NotFound: 404,
  OrderNotFound: 404,
  PayloadTooLarge: 413,
};

export function orderBookErrorStatus(errorType: string): number {
  return ORDER_BOOK_ERROR_STATUS[errorType] ?? 400;
}

/**
 * An order-book answer whose status depends on the route, not on the errorType (e.g. `NoLiquidity` is 400 for a
 * quote but 404 for a native price). Only routes throw it.
 */
export class OrderBookHttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    readonly description: string,
  ) {
    super(`${errorType}: ${description}`);
    this.name = 'OrderBookHttpError';
  }
}

/** An auxiliary-API error: HTTP status and a message for `{message}`. */
export class AuxError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'AuxError';
  }
}

export type ApiFamily = 'orderbook' | 'aux';

export interface OrderBookErrorBody {
  errorType: string;
  description: string;
  data?: unknown;
}

export interface AuxErrorBody {
  message: string;
}
