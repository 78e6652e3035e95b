/**
 * Redis connections for coordination and pub/sub that fail fast instead of queueing: while Redis is unreachable
 * every command rejects at once (no offline queue, a command timeout), so callers fall back to local work
 * instead of stalling; the connection keeps reconnecting in the background (capped backoff) and never throws
 * an unhandled 'error' event. An outage is logged once when it starts and once when it ends.
 *
 * @example
 *   const redis = openRedisConnection({ url: 'redis://127.0.0.1:6379', name: 'coordination', logger });
 *   await waitUntilReady(redis, 2_000); // false: Redis is down for now (commands reject until it is back)
 */
import { Redis } from 'ioredis';

export interface InfraLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface RedisConnectionOptions {
  url: string;
  /** shown in CLIENT LIST and the logs */
  name: string;
  /** a command without a reply within this time rejects (default 2000 ms) */
  commandTimeoutMs?: number;
  /** longest wait between reconnection attempts (default 2000 ms) */
  maxReconnectDelayMs?: number;
  /** a subscriber connection: re-subscribing after a reconnect is left to the owner (RedisPubSub) */
  subscriber?: boolean;
  logger?: InfraLogger;
}

export function openRedisConnection(options: RedisConnectionOptions): Redis {
  const maxDelay = options.maxReconnectDelayMs ?? 2_000;
  const redis = new Redis(options.url, {
    connectionName: options.name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // a subscriber must not time out: it waits for messages, and SUBSCRIBE replies are not timed
    commandTimeout: options.subscriber ? undefined : (options.commandTimeoutMs ?? 2_000),
    connectTimeout: 2_000,
    autoResubscribe: false,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    lazyConnect: false,
  });
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    options.logger?.warn({ err: err.message, connection: options.name }, 'redis: connection lost; retrying in the background');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    options.logger?.info({ connection: options.name }, 'redis: reconnected');
  });
  return redis;
}

/** Resolves true once the connection is ready, false after `timeoutMs` (the connection keeps trying). */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref?.();
    redis.on('ready', onReady);
  });
}

/** Closes a connection without waiting for a reply from a Redis that may be gone. */
export async function closeRedisConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1_000);
    timer.unref?.();
    redis.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (redis.status === 'ready') {
    await Promise.race([redis.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 500).unref?.())]);
  }
  redis.disconnect(false);
  await ended;
}
