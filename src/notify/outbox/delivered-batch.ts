/**
 * Group commit of "delivered": each delivery that succeeded waits until its row is written, as before, but the
 * deliveries that finish while a write is running are written together by the next one (one UPDATE for all of
 * them). A slot is freed, and a success counted, only once its row says `delivered`, so nothing changes for a
 * crash: a delivery whose write did not happen is due again after its lease, as with one write per delivery.
 *
 * @example
 *   const delivered = new DeliveredBatch(db);
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

  constructor(private readonly db: Kysely<DB>) {}

  /** Resolves once the delivery's row is written as delivered; rejects when that write failed. */
  record(key: DeliveryKey): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.writing ??= this.writeAll();
    });
  }

  /** Resolves once no write is pending or running. */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeAll(): Promise<void> {
    // the deliveries finishing in this turn of the event loop join the first write
    await new Promise<void>((resolve) => setImmediate(resolve));
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
