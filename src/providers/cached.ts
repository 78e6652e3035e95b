/**
 * `cached(source, ttl, nullTtl)`: remembers a source's answers in memory.
 *
 * - a value is kept `ttlMs`, a `null` ("no data") `nullTtlMs` — separately, since "no data" usually lasts
 *   longer (or, for first-party data that can appear at any block, shorter);
 * - a rejection is never cached: the next lookup asks the source again (a 429/5xx/timeout is not "no data");
 * - concurrent lookups of the same key share one call to the source (no stampede on expiry);
 * - at most `maxEntries` keys are kept (oldest written first out); a ttl of 0 disables that half of the cache.
 *
 * @example
 *   const coingecko = cached(new CoingeckoUsdPrice({ apiKey }), 120_000, 1_800_000, { key: (q) => `${q.chainId}:${q.token}` });
 */
import type { DataSource } from './data-source.js';

export interface CachedOptions<Q> {
  /** cache key of a query (default: JSON of the query) */
  key?: (query: Q) => string;
  /** keys kept at most (default 10 000) */
  maxEntries?: number;
  /** clock in ms (tests) */
  now?: () => number;
}

export interface CachedSource<Q, V> extends DataSource<Q, V> {
  readonly source: DataSource<Q, V>;
  /** forgets one query's answer, or everything */
  invalidate(query?: Q): void;
  /** keys currently stored (expired ones included until touched) */
  readonly size: number;
}

interface Entry<V> {
  value: V | null;
  expiresAt: number;
}

export function cached<Q, V>(source: DataSource<Q, V>, ttlMs: number, nullTtlMs: number, options: CachedOptions<Q> = {}): CachedSource<Q, V> {
  if (!(ttlMs >= 0) || !(nullTtlMs >= 0)) throw new RangeError('cached: ttl and nullTtl must be >= 0 ms');
  const keyOf = options.key ?? ((query: Q) => JSON.stringify(query));
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry<V>>();
  const inFlight = new Map<string, Promise<V | null>>();

  const store = (key: string, value: V | null) => {
    const ttl = value === null ? nullTtlMs : ttlMs;
    if (ttl <= 0) return;
    entries.delete(key);
    entries.set(key, { value, expiresAt: now() + ttl });
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      entries.delete(oldest);
    }
  };

  return {
    name: source.name,
    source,
    get size() {
      return entries.size;
    },
    invalidate(query?: Q) {
      if (query === undefined) entries.clear();
      else entries.delete(keyOf(query));
    },
    lookup(query: Q): Promise<V | null> {
      const key = keyOf(query);
      const hit = entries.get(key);
      if (hit) {
        if (hit.expiresAt > now()) return Promise.resolve(hit.value);
        entries.delete(key);
      }
      const pending = inFlight.get(key);
      if (pending) return pending;
      const call = (async () => {
        try {
          const value = (await source.lookup(query)) ?? null;
          store(key, value);
          return value;
        } finally {
          inFlight.delete(key);
        }
      })();
      inFlight.set(key, call);
      return call;
    },
  };
}
