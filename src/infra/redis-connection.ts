/**
 * The Redis connection of a node (REDIS_URL): shared rate limits, cache and stream fan-out across replicas.
 * Commands fail fast while Redis is down (no unbounded offline queue), and the client keeps reconnecting.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    connectTimeout: 5_000,
    commandTimeout: 2_000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(200 * 2 ** attempt, 5_000) + Math.floor(Math.random() * 200),
    lazyConnect: false,
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) logger.warn({ err: err.message }, 'redis: connection error (retrying)');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis: connected again');
    down = false;
  });
  return redis;
}
