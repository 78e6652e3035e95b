/**
 * The order repository that says when orders were placed: listeners are called once the transaction that
 * inserted an order has committed (so that whoever reads the orders next sees it), or right after an insert made
 * outside a transaction. In-process only: another replica's intake is not heard here (its auctions follow blocks).
 * The auction loop uses it to start a cycle as soon as an order arrives instead of on the next block.
 *
 * @example
 *   const repo = new PlacedOrdersRepository(db);
 *   const stop = repo.onPlaced(() => loop.wake());
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { StoredQuote } from '../quotes/stored-quote.js';
import { OrderRepository, type OrderRepositoryOptions } from './order-repository.js';

export class PlacedOrdersRepository extends OrderRepository {
  private readonly listeners = new Set<() => void>();
  /** transactions that inserted an order (told about on commit) */
  private readonly inserting = new WeakSet<object>();

  constructor(
    private readonly root: Kysely<DB>,
    options: OrderRepositoryOptions = {},
  ) {
    super(root, options);
  }

  onPlaced(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  override async transaction<T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
    let inserted = false;
    const result = await super.transaction(async (tx) => {
      const r = await fn(tx);
      inserted = this.inserting.has(tx);
      return r;
    });
    if (inserted) this.tell();
    return result;
  }

  override async insert(...args: Parameters<OrderRepository['insert']>): Promise<boolean> {
    const [, , db] = args as [unknown, StoredQuote | null, unknown];
    const ok = await super.insert(...args);
    if (ok && db !== undefined && db !== this.root) this.inserting.add(db as object);
    else if (ok) this.tell();
    return ok;
  }

  private tell(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // a listener's failure is its own
      }
    }
  }
}
