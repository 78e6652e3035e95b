/**
 * The quotes this process stored, held in memory until they expire, so that an order carrying its quote's id (every
 * SDK order does) finds it without a database read. A hint, never the only truth: a quote not held here (stored by
 * another replica or before a restart, or evicted) is read from the database as before. A stored quote row never
 * changes (rows are only deleted once expired), so a held quote is exactly what its row would say.
 *
 * @example
 *   const recent = new RecentQuotes();
 *   recent.remember({ sellToken, buyToken, kind, expiresAt, quote: { ...stored, id } });
 *   const held = recent.get(id); // undefined: ask the database
 */
import type { Address } from 'viem';
import type { StoredQuote } from './stored-quote.js';

export interface RecentQuote {
  /** lowercase */
  sellToken: Address;
  /** lowercase */
  buyToken: Address;
  kind: 'sell' | 'buy';
  /** when the quote expires, unix milliseconds (as stored: its `expiration` column) */
  expiresAt: number;
  quote: StoredQuote & { id: number };
}

/** Quotes held at most (default): the oldest goes first, it is then read from the database. */
const DEFAULT_MAX_ENTRIES = 20_000;

export class RecentQuotes {
  private readonly byId = new Map<number, RecentQuote>();

  constructor(private readonly maxEntries = DEFAULT_MAX_ENTRIES) {}

  remember(entry: RecentQuote): void {
    this.byId.set(entry.quote.id, entry);
    while (this.byId.size > this.maxEntries) {
      const oldest = this.byId.keys().next().value;
      if (oldest === undefined) break;
      this.byId.delete(oldest);
    }
  }

  /** The quote stored here under this id, if still held (expired ones too, until `forgetExpired`). */
  get(id: number): RecentQuote | undefined {
    return this.byId.get(id);
  }

  /** Drops the quotes expired before `nowMs` (no order can use them any more). */
  forgetExpired(nowMs: number): void {
    for (const [id, entry] of this.byId) if (entry.expiresAt < nowMs) this.byId.delete(id);
  }

  get size(): number {
    return this.byId.size;
  }
}
