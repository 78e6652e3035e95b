/**
 * An `IndexedSource` for an auction loop that does not share a process with the indexer: it follows the
 * indexer's checkpoint in the database and, whenever it advances, reports the new range with the orders its
 * trades, invalidations and presignatures touched. (In one process, pass the indexer itself: it reports at once.)
 * A checkpoint that moves back (a reorg was rewound) is simply followed from its new position.
 *
 * @example
 *   const indexed = watchIndexedRanges({ db, chainId, signal });
 *   wireAuctionLoop({ ..., indexer: indexed });   // src/loops.ts
 */
import { sql, type Kysely } from 'kysely';
import type { Hex } from 'viem';
import { toHex } from '../db/codec.js';
import type { DB } from '../db/schema.js';
import type { IndexedSource } from './auction-loop.js';

export interface WatchIndexedRangesOptions {
  db: Kysely<DB>;
  chainId: number;
  /** the indexer's checkpoint name (default 'main') */
  name?: string;
  pollMs?: number;
  signal: AbortSignal;
}

type Listener = Parameters<IndexedSource['onIndexed']>[0];

export function watchIndexedRanges(options: WatchIndexedRangesOptions): IndexedSource {
  const { db, chainId, signal } = options;
  const name = options.name ?? 'main';
  const pollMs = options.pollMs ?? 500;
  const listeners = new Set<Listener>();
  let started = false;

  async function checkpoint(): Promise<number | null> {
    const row = await db.selectFrom('indexer_checkpoints').select('block_number').where('chain_id', '=', chainId).where('name', '=', name).executeTakeFirst();
    return row ? Number(row.block_number) : null;
  }

  async function touched(from: number, to: number): Promise<Hex[]> {
    const { rows } = await sql<{ order_uid: Uint8Array }>`
      select order_uid from trades where chain_id = ${chainId} and block_number between ${from} and ${to}
      union select order_uid from invalidations where chain_id = ${chainId} and block_number between ${from} and ${to}
      union select order_uid from presignature_events where chain_id = ${chainId} and block_number between ${from} and ${to}`.execute(db);
    return rows.map((r) => toHex(r.order_uid));
  }

  async function run(): Promise<void> {
    let seen = await checkpoint().catch(() => null);
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) break;
      try {
        const now = await checkpoint();
        if (now === null || seen === null || now <= seen) {
          seen = now;
          continue;
        }
        const orderUids = await touched(seen + 1, now);
        const from = seen + 1;
        seen = now;
        for (const listener of listeners) await Promise.resolve(listener(from, now, { orderUids })).catch(() => {});
      } catch {
        // the database is briefly unavailable: look again at the next poll
      }
    }
  }

  return {
    onIndexed(listener) {
      listeners.add(listener);
      if (!started) {
        started = true;
        void run();
      }
      return () => listeners.delete(listener);
    },
  };
}
