/**
 * "The database is unreachable" as one error type: PostgreSQL stopped, restarting, or the connection cut while
 * a query ran. The HTTP layer answers it with 503 in the route's envelope (instead of a 500 that reads as a bug),
 * and callers can tell it from a query's own failure (a constraint, a syntax error).
 *
 * `guardPool` wraps a pg pool for Kysely: failures to connect, and connection-class failures of a query, are
 * rethrown as DatabaseUnavailableError (with the original as `cause`); everything else passes through.
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';

export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`database unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** True for errors that say the server cannot be reached or went away (not for errors of the statement itself). */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // SQLSTATE class 08 connection exception; 57P01..57P03 shutdown / cannot connect now; 53300 too many connections
    if (/^08/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  }
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly/i.test(err.message);
}

/** DatabaseUnavailableError anywhere in the `cause` chain (services may wrap it). */
export function databaseUnavailableIn(err: unknown): DatabaseUnavailableError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return e;
  }
  return null;
}

export function guardPool(pool: PostgresPool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      let client: PostgresPoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw new DatabaseUnavailableError(err);
      }
      // pg emits a checked-out client's connection loss (e.g. "terminating connection due to administrator
      // command") as an 'error' event with no listener — an uncaught exception — when no query of it is running
      // (a transaction between two statements); the next query then fails and is mapped below
      const events = client as unknown as { on?(e: 'error', f: () => void): void; removeListener?(e: 'error', f: () => void): void };
      const swallow = (): void => {};
      events.on?.('error', swallow);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      const guarded = ((...args: unknown[]) => {
        const result = query(...args);
        if (result instanceof Promise) {
          return result.catch((err: unknown) => {
            throw isConnectionFailure(err) ? new DatabaseUnavailableError(err) : err;
          });
        }
        return result; // a cursor
      }) as PostgresPoolClient['query'];
      return Object.assign(Object.create(client) as PostgresPoolClient, {
        query: guarded,
        release: () => {
          events.removeListener?.('error', swallow);
          client.release();
        },
      });
    },
    end: () => pool.end(),
  };
}
