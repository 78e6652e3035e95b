/**
 * The outbox dispatcher: independent delivery workers. Up to `concurrency` deliveries are in flight at once, each
 * on its own: a slot that frees is refilled at once, never waiting for slower ones. It claims due deliveries (FOR
 * UPDATE SKIP LOCKED + a lease, so several replicas share the work without sending twice in the normal case),
 * fresh deliveries to healthy subscriptions first. A suspect delivery (a retry, or to a subscription whose last
 * attempt failed) goes one at a time per subscription (a slow receiver holds one slot, not all), and suspect
 * ones together hold at most `concurrency` minus a reserve of slots, so fresh notifications are never starved
 * by them; a healthy subscription may use every slot but the reserve. Each subscription has a circuit breaker
 * (see markFailed): after failures in a row its deliveries pause. At least once: a dispatcher that dies
 * mid-delivery leaves its rows leased; they are due again when the lease ends.
 *
 * @example
 *   const dispatcher = new OutboxDispatcher({ db, channels, policy, leaseMs: 30_000, pollIntervalMs: 1000, concurrency: 8 });
 *   void dispatcher.run(signal);
 *   dispatcher.wake();
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChannelName, NotificationChannel } from '../channels/channel.js';
import { attemptDelivery, type AttemptOutcome, type DeliveryPolicy } from './delivery-attempt.js';
import { claimDue, loadDeliveries, type ClaimedDelivery, type ClaimedKey } from './delivery-store.js';
import { WakeUp } from './wake-up.js';

export interface DispatcherLogger {
  warn(obj: object, msg?: string): void;
}

export interface OutboxDispatcherOptions {
  db: Kysely<DB>;
  channels: ReadonlyMap<ChannelName, NotificationChannel>;
  policy: DeliveryPolicy;
  leaseMs: number;
  pollIntervalMs: number;
  /** deliveries in flight at once */
  concurrency: number;
  logger?: DispatcherLogger;
  random?: () => number;
}

/** Slots kept for fresh deliveries to healthy subscriptions: a quarter, at least one. */
export function reservedSlots(concurrency: number): number {
  return concurrency <= 1 ? 0 : Math.max(1, Math.floor(concurrency / 4));
}

export class OutboxDispatcher {
  private readonly wakeUp = new WakeUp();
  readonly counts: Record<AttemptOutcome, number> = { delivered: 0, retry: 0, dead: 0, gone: 0 };
  /** in flight: delivery key → its subscription and whether it was suspect when claimed */
  private readonly inFlight = new Map<string, { subscriptionId: string; suspect: boolean }>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: OutboxDispatcherOptions) {}

  /** New deliveries may be due: look now. */
  wake(): void {
    this.wakeUp.wake();
  }

  /** Deliveries in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Claims what the free slots can take and starts each delivery on its own; returns how many were claimed. */
  async fill(): Promise<number> {
    const { db, concurrency } = this.options;
    const free = concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const perSubscription = Math.max(1, concurrency - reservedSlots(concurrency));
    const perSub = new Map<string, number>();
    const busy = new Set<string>();
    let suspectActive = 0;
    for (const d of this.inFlight.values()) {
      perSub.set(d.subscriptionId, (perSub.get(d.subscriptionId) ?? 0) + 1);
      if (d.suspect) {
        suspectActive++;
        busy.add(d.subscriptionId);
      }
    }
    for (const [id, n] of perSub) if (n >= perSubscription) busy.add(id);
    const suspectLimit = Math.max(0, concurrency - reservedSlots(concurrency) - suspectActive);
    const keys = await claimDue(db, free, this.options.leaseMs, { busy: [...busy], perSubscription, suspectLimit });
    // what the channels need, for the whole claim in one query (a delivery whose subscription went is left out)
    const loaded = new Map((await loadDeliveries(db, keys)).map((d) => [`${d.notificationId}\u0000${d.subscriptionId}`, d]));
    for (const key of keys) {
      const delivery = loaded.get(`${key.notificationId}\u0000${key.subscriptionId}`);
      if (delivery) this.start(key, delivery);
    }
    return keys.length;
  }

  /** Claims and delivers one batch, waiting for it; returns how many were claimed. */
  async dispatchOnce(): Promise<number> {
    const claimed = await this.fill();
    await this.idle();
    return claimed;
  }

  /** Resolves once no delivery is in flight. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const deps = { db: this.options.db, channels: this.options.channels, policy: this.options.policy, random: this.options.random };
    try {
      this.counts[await attemptDelivery(deps, delivery)]++;
    } catch (err) {
      this.options.logger?.warn({ err: (err as Error).message }, 'notifications: recording a delivery failed (it is retried after its lease)');
    }
  }

  private start(key: ClaimedKey, delivery: ClaimedDelivery): void {
    const id = `${key.notificationId}\u0000${key.subscriptionId}`;
    this.inFlight.set(id, { subscriptionId: key.subscriptionId, suspect: key.suspect });
    const work: Promise<void> = this.deliver(delivery).finally(() => {
      this.inFlight.delete(id);
      this.running.delete(work);
      this.wakeUp.wake(); // a slot is free
    });
    this.running.add(work);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let claimed = 0;
      this.wakeUp.clear();
      try {
        claimed = await this.fill();
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message }, 'notifications: dispatch failed; retrying');
      }
      if (signal.aborted) break;
      // more may be due while slots are free; otherwise sleep until a slot frees, new work is written, or the poll
      if (claimed > 0 && this.inFlight.size < this.options.concurrency) continue;
      if (this.wakeUp.pending) continue;
      await this.wakeUp.sleep(this.options.pollIntervalMs, signal);
    }
    await this.idle();
  }
}
