/**
 * For tests that need Redis: the shared server (TEST_REDIS_URL, checked by test/fixtures/required-services.ts),
 * a unique key namespace per test run with clean-up, and private throw-away `redis-server` processes for outage
 * and reconnection tests (they need the binary: `skipUnless('redis-server')`).
 *
 * @example
 *   const url = await ensureLocalRedis();
 *   const ns = uniqueNamespace('balances');   // "test:balances:<random>:"
 *   ...
 *   await deleteNamespace(url, ns);
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { redisAnswers, skipUnless, TEST_REDIS_URL } from '../../test/fixtures/required-services.js';

/** The shared test Redis (TEST_REDIS_URL, default 127.0.0.1:6379; test/fixtures/required-services.ts), or throws
 *  the skip message when it is absent — call it only in tests that `skipUnless('redis')`. */
export async function ensureLocalRedis(): Promise<string> {
  const skip = await skipUnless('redis');
  if (skip) throw new Error(skip);
  return TEST_REDIS_URL;
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
      if (await redisAnswers(url)) return;
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
