/**
 * Group commit of "delivered": the successes that come within `maxWaitMs` of the first one (or until `size` of
 * them are waiting), and those that finish while a write is running, are written together (one UPDATE for all).
 * `record` resolves once the row says `delivered`; until then the row stays leased (no one else takes it), and a
 * crash before the write makes it due again after its lease, as a crash between sending and writing always did.
 *
 * @example
 *   const delivered = new DeliveredBatch(db, { size: 8, maxWaitMs: 5 });
 *   await delivered.record({ notificationId, subscriptionId }); // written (with whatever finished meanwhile)
 *   await delivered.settled(); // no write pending: a later failure is written after every earlier success
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { markDeliveredMany, type DeliveryKey } from './delivery-store.js';

interface Waiting {
  key: DeliveryKey;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class DeliveredBatch {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | null = null;
  private startWriting: (() => void) | null = null;
  /** writes of waiting successes done by someone else's statement (writeWith) */
  private readonly borrowed = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: { size: number; maxWaitMs: number } = { size: 1, maxWaitMs: 0 },
  ) {}

  /** Resolves once the delivery's row is written as delivered; rejects when that write failed. */
  record(key: DeliveryKey): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.writing ??= this.writeAll();
      if (this.waiting.length >= this.options.size) this.startWriting?.();
    });
  }

  /** Resolves once no write is pending or running. */
  async settled(): Promise<void> {
    while (this.writing || this.borrowed.size > 0) await Promise.allSettled([this.writing, ...this.borrowed]);
  }

  /**
   * Runs `statement` with the successes waiting now, which it must write as markDeliveredMany does (in a statement
   * that does other work as well): they resolve with it, or reject when it fails.
   */
  async writeWith<T>(statement: (keys: DeliveryKey[]) => Promise<T>): Promise<T> {
    const batch = this.waiting.splice(0);
    const run = statement(batch.map((w) => w.key));
    const done = run.then(
      () => batch.forEach((w) => w.resolve()),
      (error: unknown) => batch.forEach((w) => w.reject(error)),
    );
    this.borrowed.add(done);
    void done.finally(() => this.borrowed.delete(done));
    return run;
  }

  private async writeAll(): Promise<void> {
    // the successes of the next few milliseconds (at least those of this turn of the event loop) join the first write
    await new Promise<void>((resolve) => {
      const go = () => {
        clearTimeout(timer);
        this.startWriting = null;
        resolve();
      };
      const timer = setTimeout(go, this.options.maxWaitMs);
      this.startWriting = go;
      if (this.waiting.length >= this.options.size) go();
    });
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0);
      try {
        await markDeliveredMany(this.db, batch.map((w) => w.key));
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.writing = null;
  }
}
