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
 * Round trips (issue 19): when running, the dispatcher claims in batches (with what the channels need, in the
 * same statement) into a ready queue of up to sixteen times `concurrency` leased deliveries, and a freed slot
 * takes the next one that the rules above allow from it; the queue is refilled when half empty. A claimed
 * delivery that has not started is given back (due as before, its attempt not counted) when its subscription
 * fails, when it has waited a third of the lease, and when the dispatcher stops. Successes are written
 * together (DeliveredBatch); each slot still frees only once its outcome is written.
 *
 * @example
 *   const dispatcher = new OutboxDispatcher({ db, channels, policy, leaseMs: 30_000, pollIntervalMs: 1000, concurrency: 8 });
 *   void dispatcher.run(signal);
 *   dispatcher.wake();
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChannelName, NotificationChannel } from '../channels/channel.js';
import { DeliveredBatch } from './delivered-batch.js';
import { attemptDelivery, type AttemptOutcome, type DeliveryPolicy } from './delivery-attempt.js';
import { claimDeliveries, claimOrder, releaseClaims, type LoadedClaim } from './delivery-store.js';
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

interface Ready extends LoadedClaim {
  /** Date.now() when claimed */
  claimedAt: number;
}

export class OutboxDispatcher {
  private readonly wakeUp = new WakeUp();
  readonly counts: Record<AttemptOutcome, number> = { delivered: 0, retry: 0, dead: 0, gone: 0 };
  /** in flight: delivery key → its subscription and whether it was suspect when claimed */
  private readonly inFlight = new Map<string, { subscriptionId: string; suspect: boolean }>();
  private readonly running = new Set<Promise<void>>();
  /** claimed and leased, not started yet: fresh first, then by when they were due */
  private ready: Ready[] = [];
  /** the last refill found fewer due rows than it asked for: no refill until new work may be there */
  private exhausted = false;
  /** the subscriptions holding up the ready queue when a claim past them last found nothing */
  private probedPast: string | null = null;
  private readonly delivered: DeliveredBatch;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.delivered = new DeliveredBatch(options.db, { size: 8 * options.concurrency, maxWaitMs: 25 });
  }

  /** New deliveries may be due: look now. */
  wake(): void {
    this.newWorkMayBeDue();
    this.wakeUp.wake();
  }

  /** Deliveries in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  private newWorkMayBeDue(): void {
    this.exhausted = false;
    this.probedPast = null;
  }

  /** How many of each subscription are in flight, which have a suspect one in flight, and how many are suspect. */
  private occupancy() {
    const perSub = new Map<string, number>();
    const suspectSubs = new Set<string>();
    let suspectActive = 0;
    for (const d of this.inFlight.values()) {
      perSub.set(d.subscriptionId, (perSub.get(d.subscriptionId) ?? 0) + 1);
      if (d.suspect) {
        suspectActive++;
        suspectSubs.add(d.subscriptionId);
      }
    }
    return { perSub, suspectSubs, suspectActive };
  }

  /** A healthy subscription's share of the slots: all but the reserve. */
  private get perSubscription(): number {
    return Math.max(1, this.options.concurrency - reservedSlots(this.options.concurrency));
  }

  /** Starts what the free slots and the rules allow from the ready queue; returns how many it started. */
  private startReady(): number {
    const { concurrency } = this.options;
    const { perSub, suspectSubs } = this.occupancy();
    let { suspectActive } = this.occupancy();
    const suspectCap = concurrency - reservedSlots(concurrency);
    let started = 0;
    for (let i = 0; i < this.ready.length && this.inFlight.size < concurrency; ) {
      const r = this.ready[i]!;
      const n = perSub.get(r.subscriptionId) ?? 0;
      const allowed = !suspectSubs.has(r.subscriptionId) && n < this.perSubscription && (!r.suspect || suspectActive < suspectCap);
      if (!allowed) {
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      perSub.set(r.subscriptionId, n + 1);
      if (r.suspect) {
        suspectActive++;
        suspectSubs.add(r.subscriptionId);
      }
      this.start(r);
      started++;
    }
    return started;
  }

  /**
   * Claims up to `limit` more, past the subscriptions in `past`: none of a subscription with a suspect delivery
   * in flight or waiting, and suspect ones only as far as their share of the slots allows.
   */
  private async claim(limit: number, perSubscription: number, past: Iterable<string> = []): Promise<number> {
    const { concurrency, leaseMs } = this.options;
    const { suspectSubs, suspectActive } = this.occupancy();
    const busy = new Set([...suspectSubs, ...past]);
    let suspectWaiting = 0;
    for (const r of this.ready) {
      if (!r.suspect) continue;
      suspectWaiting++;
      busy.add(r.subscriptionId);
    }
    const suspectLimit = Math.max(0, concurrency - reservedSlots(concurrency) - suspectActive - suspectWaiting);
    // the successes waiting to be written go with the claim
    const claims = await this.delivered.writeWith((delivered) => claimDeliveries(this.options.db, limit, leaseMs, { busy: [...busy], perSubscription, suspectLimit }, delivered));
    const now = Date.now();
    this.ready.push(...claims.map((c) => ({ ...c, claimedAt: now })));
    this.ready.sort(claimOrder);
    return claims.length;
  }

  /** Claims what the free slots can take and starts each delivery on its own; returns how many were claimed. */
  async fill(): Promise<number> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    // a subscription takes at most its share of this claim; more of it comes once it has slots again
    const claimed = await this.claim(free, this.perSubscription, this.occupancy().suspectSubs);
    this.startReady();
    await this.releaseWaiting(() => true); // what the rules held back goes back
    return claimed;
  }

  /**
   * One round of the running dispatcher: gives back what waited too long, starts what may start, refills the
   * ready queue when half empty, and claims past the subscriptions holding it up when slots are free and none of
   * it may start. Returns how many were claimed.
   */
  private async round(): Promise<number> {
    const { concurrency, leaseMs } = this.options;
    // PGlite costs ~0.5 ms a statement before any row: claims of 64 cost a third per delivery of claims of 16
    const capacity = 16 * concurrency;
    const stale = Date.now() - leaseMs / 3;
    await this.releaseWaiting((r) => r.claimedAt < stale);
    this.startReady();
    let claimed = 0;
    if (this.ready.length <= capacity / 2 && !this.exhausted) {
      const want = capacity - this.ready.length;
      claimed = await this.claim(want, want);
      if (claimed < want) this.exhausted = true;
      this.startReady();
    }
    if (this.inFlight.size < concurrency && this.ready.length > 0) {
      // slots free and nothing waiting may start: what others have due is not held up by them
      const holding = [...new Set(this.ready.map((r) => r.subscriptionId))].sort();
      const key = holding.join('\u0000');
      if (key !== this.probedPast) {
        const found = await this.claim(concurrency - this.inFlight.size, this.perSubscription, holding);
        if (found === 0) this.probedPast = key;
        claimed += found;
        this.startReady();
      }
    }
    return claimed;
  }

  /** Gives back the waiting claims that match (due as before, attempt not counted). */
  private async releaseWaiting(which: (r: Ready) => boolean): Promise<void> {
    const going = this.ready.filter(which);
    if (going.length === 0) return;
    this.ready = this.ready.filter((r) => !which(r));
    try {
      await releaseClaims(this.options.db, going);
      this.newWorkMayBeDue();
    } catch (err) {
      this.options.logger?.warn({ err: (err as Error).message }, 'notifications: giving back unstarted deliveries failed (they are due again after their lease)');
    }
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

  private async deliver(delivery: Ready, attempted: (ok: boolean) => void): Promise<void> {
    const deps = { db: this.options.db, channels: this.options.channels, policy: this.options.policy, random: this.options.random, delivered: this.delivered };
    try {
      const outcome = await attemptDelivery(deps, delivery, attempted);
      this.counts[outcome]++;
      if (outcome === 'gone') this.ready = this.ready.filter((r) => r.subscriptionId !== delivery.subscriptionId);
      // its subscription failed: what waits for it goes back, to be claimed again as suspect (or paused)
      else if (outcome !== 'delivered') await this.releaseWaiting((r) => r.subscriptionId === delivery.subscriptionId);
      else if (delivery.suspect) this.newWorkMayBeDue(); // its subscription's other rows may be claimed again
    } catch (err) {
      this.options.logger?.warn({ err: (err as Error).message }, 'notifications: recording a delivery failed (it is retried after its lease)');
    }
  }

  /**
   * A delivery holds its slot while its channel works on it. A success frees the slot before its row is written
   * (written together with others, see DeliveredBatch; the row stays leased until then, so it is never taken
   * twice, and a crash before the write makes it due again after its lease, as a crash between sending and
   * writing always did); a failure holds its slot until it is written, with its subscription's waiting claims
   * given back. Either way the work ends, and `idle()` resolves, only once the outcome is written.
   */
  private start(delivery: Ready): void {
    const id = `${delivery.notificationId}\u0000${delivery.subscriptionId}`;
    this.inFlight.set(id, { subscriptionId: delivery.subscriptionId, suspect: delivery.suspect });
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.inFlight.delete(id);
      this.wakeUp.wake(); // a slot is free
    };
    const work: Promise<void> = this.deliver(delivery, (ok) => {
      // a suspect delivery keeps its subscription's one slot until its outcome is known to the database
      if (ok && !delivery.suspect) free();
    }).finally(() => {
      free();
      this.running.delete(work);
    });
    this.running.add(work);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let claimed = 0;
      this.wakeUp.clear();
      try {
        claimed = await this.round();
      } catch (err) {
        if (!signal.aborted) this.options.logger?.warn({ err: (err as Error).message }, 'notifications: dispatch failed; retrying');
      }
      if (signal.aborted) break;
      // more may be due while slots are free; otherwise sleep until a slot frees, new work is written, or the poll
      if (claimed > 0 && this.inFlight.size < this.options.concurrency) continue;
      if (this.wakeUp.pending) continue;
      await this.wakeUp.sleep(this.options.pollIntervalMs, signal);
      if (!this.wakeUp.pending) this.newWorkMayBeDue(); // the poll: retries and other replicas' rows may be due
    }
    await this.releaseWaiting(() => true);
    await this.idle();
  }
}
