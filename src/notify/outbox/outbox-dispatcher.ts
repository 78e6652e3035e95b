/**
 * The outbox dispatcher: claims due deliveries (FOR UPDATE SKIP LOCKED + a lease, so several replicas share the
 * work without sending twice in the normal case), delivers them through their channels, records each outcome,
 * and sleeps until woken (new deliveries written) or the poll interval passes. At least once: a dispatcher that
 * dies mid-delivery leaves its rows leased; they are due again when the lease ends.
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
import { claimDue, loadDeliveries } from './delivery-store.js';
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

export class OutboxDispatcher {
  private readonly wakeUp = new WakeUp();
  readonly counts: Record<AttemptOutcome, number> = { delivered: 0, retry: 0, dead: 0, gone: 0 };

  constructor(private readonly options: OutboxDispatcherOptions) {}

  /** New deliveries may be due: look now. */
  wake(): void {
    this.wakeUp.wake();
  }

  /** Claims and delivers one batch; returns how many were claimed. */
  async dispatchOnce(): Promise<number> {
    const { db } = this.options;
    const keys = await claimDue(db, this.options.concurrency, this.options.leaseMs);
    if (keys.length === 0) return 0;
    const deliveries = await loadDeliveries(db, keys);
    const deps = { db, channels: this.options.channels, policy: this.options.policy, random: this.options.random };
    const outcomes = await Promise.allSettled(deliveries.map((d) => attemptDelivery(deps, d)));
    for (const o of outcomes) {
      if (o.status === 'fulfilled') this.counts[o.value]++;
      else this.options.logger?.warn({ err: (o.reason as Error).message }, 'notifications: recording a delivery failed (it is retried after its lease)');
    }
    return keys.length;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let claimed = 0;
      try {
        this.wakeUp.clear();
        claimed = await this.dispatchOnce();
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message }, 'notifications: dispatch failed; retrying');
      }
      if (claimed > 0 || signal.aborted || this.wakeUp.pending) continue;
      await this.wakeUp.sleep(this.options.pollIntervalMs, signal);
    }
  }
}
