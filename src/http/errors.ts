/**
 * The two error envelopes and the domain errors that map onto them.
 * - order book: `{errorType, description, data?}` (spec §2 "Error body")
 * - auxiliary API: `{message}`
 * Services throw these; the one Fastify error handler (http/server.ts) turns them into responses.
 */

/** An order-book error with its spec/upstream errorType and HTTP status. */
export class OrderBookError extends Error {
  constructor(
    readonly errorType: string,
    readonly description: string,
    readonly status: number = 400,
    readonly data?: unknown,
  ) {
    super(`${errorType}: ${description}`);
    this.name = 'OrderBookError';
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
