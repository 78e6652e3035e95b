/**
 * For tests that need Redis: the shared server on 127.0.0.1:6379 (started if down), a unique key namespace per
 * test run with clean-up, and private throw-away `redis-server` processes for outage and reconnection tests.
 *
 * @example
 *   const url = await ensureLocalRedis();
 *   const ns = uniqueNamespace('balances');   // "test:balances:<random>:"
 *   ...
 *   await deleteNamespace(url, ns);
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

async function ping(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** The shared local Redis (127.0.0.1:6379), started as a daemon if it is not running. */
export async function ensureLocalRedis(): Promise<string> {
  if (await ping(LOCAL_REDIS_URL)) return LOCAL_REDIS_URL;
  spawnSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', '6379', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    if (await ping(LOCAL_REDIS_URL)) return LOCAL_REDIS_URL;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('could not start redis-server on 127.0.0.1:6379');
}

export function uniqueNamespace(label: string): string {
  return `test:${label}:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key of a namespace (SCAN, never KEYS). */
export async function deleteNamespace(url: string, namespace: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Keys of a namespace (for assertions). */
export async function namespaceKeys(url: string, namespace: string): Promise<string[]> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const found: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return found.sort();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** kills the server (an outage) */
  stop(): Promise<void>;
  /** starts it again on the same port (an empty server) */
  start(): Promise<void>;
}

/** A redis-server of our own on a free port, to kill and restart. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      if (await ping(url)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`private redis-server on port ${port} did not start`);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url, port, start, stop };
}
