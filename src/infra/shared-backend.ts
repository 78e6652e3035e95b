/**
 * The coordination + pub/sub pair a process shares with its replicas: Redis when `REDIS_URL` is set, otherwise
 * in-memory (a single process is its own cluster). Opening never fails because Redis is down: the connections
 * keep retrying and every operation rejects fast until Redis is back, so callers fall back to local work.
 *
 * @example
 *   const shared = await openSharedBackend({ redisUrl: config.redisUrl, namespace: config.redisKeyPrefix, logger });
 *   ... shared.coordination, shared.pubsub ...
 *   await shared.close();
 */
import { MemoryCoordination, type Coordination } from './coordination.js';
import { MemoryPubSub, type PubSub } from './pubsub.js';
import { RedisCoordination } from './redis-coordination.js';
import { openRedisConnection, waitUntilReady, closeRedisConnection, type InfraLogger } from './redis-connection.js';
import { RedisPubSub } from './redis-pubsub.js';

export interface SharedBackend {
  kind: 'memory' | 'redis';
  coordination: Coordination;
  pubsub: PubSub;
  close(): Promise<void>;
}

export interface SharedBackendOptions {
  redisUrl: string | null;
  /** prefix of every key and channel (e.g. "batchbook:") */
  namespace: string;
  logger?: InfraLogger;
  /** how long opening waits for a first connection before going on without it (default 2000 ms) */
  connectWaitMs?: number;
  commandTimeoutMs?: number;
}

export function memorySharedBackend(): SharedBackend {
  const coordination = new MemoryCoordination();
  const pubsub = new MemoryPubSub();
  return {
    kind: 'memory',
    coordination,
    pubsub,
    close: async () => {
      await pubsub.close();
      await coordination.close();
    },
  };
}

export async function openSharedBackend(options: SharedBackendOptions): Promise<SharedBackend> {
  if (!options.redisUrl) return memorySharedBackend();
  const commands = openRedisConnection({ url: options.redisUrl, name: 'batchbook-coordination', logger: options.logger, commandTimeoutMs: options.commandTimeoutMs });
  const subscriber = openRedisConnection({ url: options.redisUrl, name: 'batchbook-subscriber', logger: options.logger, subscriber: true });
  const wait = options.connectWaitMs ?? 2_000;
  const [a, b] = await Promise.all([waitUntilReady(commands, wait), waitUntilReady(subscriber, wait)]);
  if (!a || !b) options.logger?.warn({}, 'redis: not reachable at start-up; working locally until it is');
  const coordination = new RedisCoordination(commands, options.namespace);
  const pubsub = new RedisPubSub({ publisher: commands, subscriber, namespace: options.namespace });
  return {
    kind: 'redis',
    coordination,
    pubsub,
    close: async () => {
      await pubsub.close();
      await closeRedisConnection(commands);
    },
  };
}
