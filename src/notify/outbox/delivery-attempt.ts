/**
 * One delivery attempt and its bookkeeping, shared by the outbox dispatcher and the RabbitMQ workers: the channel
 * delivers; success is recorded; a failure is retried with backoff and full jitter (at least what the receiver
 * asked for), dead-lettered when not retryable or once the delivery has failed for `maxAgeMs`; a gone target
 * removes its subscription.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChannelName, DeliveryResult, NotificationChannel } from '../channels/channel.js';
import { fullJitterDelay, type BackoffPolicy } from './backoff.js';
import { markDelivered, markFailed, removeSubscription, type BreakerPolicy, type ClaimedDelivery, type DeliveryKey } from './delivery-store.js';

export interface DeliveryPolicy extends BackoffPolicy {
  maxAgeMs: number;
}

export interface AttemptDeps {
  db: Kysely<DB>;
  channels: ReadonlyMap<ChannelName, NotificationChannel>;
  policy: DeliveryPolicy;
  random?: () => number;
  now?: () => number;
  /**
   * Writes a success (default: markDelivered, one statement each); the dispatcher passes its DeliveredBatch.
   * A failure is written only once `settled` resolves, so it never lands before an earlier success.
   */
  delivered?: { record(key: DeliveryKey): Promise<void>; settled(): Promise<void> };
}

export type AttemptOutcome = 'delivered' | 'retry' | 'dead' | 'gone';

/**
 * The circuit breaker that goes with a backoff policy: open after 3 failures in a row, paused for half the
 * backoff cap at first (30 s with the default 60 s cap), doubling up to ten times the cap.
 */
export function breakerFor(policy: BackoffPolicy): BreakerPolicy {
  return { threshold: 3, pauseMs: Math.max(policy.capMs / 2, policy.baseMs), maxPauseMs: policy.capMs * 10 };
}

/** `attempted` is called once the channel is done with the delivery (with whether it succeeded), before its outcome is written. */
export async function attemptDelivery(deps: AttemptDeps, delivery: ClaimedDelivery, attempted?: (ok: boolean) => void): Promise<AttemptOutcome> {
  const channel = deps.channels.get(delivery.target.channel);
  let result: DeliveryResult;
  if (!channel) result = { ok: false, retryable: true, error: `channel ${delivery.target.channel} is not available on this server` };
  else {
    try {
      result = await channel.deliver(delivery.notification, delivery.target);
    } catch (err) {
      result = { ok: false, retryable: true, error: `delivery failed: ${(err as Error).message}` };
    }
  }
  attempted?.(result.ok);
  if (result.ok) {
    await (deps.delivered ? deps.delivered.record(delivery) : markDelivered(deps.db, delivery));
    return 'delivered';
  }
  await deps.delivered?.settled();
  if (result.gone) {
    await removeSubscription(deps.db, delivery.subscriptionId);
    return 'gone';
  }
  const age = (deps.now ?? Date.now)() - delivery.createdAt.getTime();
  if (!result.retryable || age >= deps.policy.maxAgeMs) {
    await markFailed(deps.db, delivery, result.error, null, breakerFor(deps.policy));
    return 'dead';
  }
  const delay = Math.max(fullJitterDelay(delivery.attempts, deps.policy, deps.random), result.retryAfterMs ?? 0);
  await markFailed(deps.db, delivery, result.error, delay, breakerFor(deps.policy));
  return 'retry';
}
