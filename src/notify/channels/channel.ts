/**
 * The port between notification delivery (outbox dispatcher, RabbitMQ workers) and each delivery channel
 * (webhook, Telegram, web push, email). A channel knows its wire format and how to judge a failure; the
 * dispatcher knows retries, backoff, dead-lettering and bookkeeping.
 */

export type ChannelName = 'webhook' | 'telegram' | 'webpush' | 'email';

/** The notification exactly as the API serves it (spec §2) and as a webhook body carries it. */
export interface OutgoingNotification {
  id: string;
  account: string;
  type: string;
  message: string;
  /** ISO 8601 UTC */
  timestamp: string;
  /** `orderId`, `chainId` (a number), and for fills `executedAmount`, `txHash`, tokens and amounts */
  metadata: Record<string, unknown>;
}

/** Where one subscription delivers. */
export interface DeliveryTarget {
  /** the subscription id */
  subscriptionId: string;
  channel: ChannelName;
  /** webhook URL, Telegram chat id, PushSubscription JSON, or email address */
  target: string;
  /** webhook signing secret (`whsec_...`); null for other channels */
  secret: string | null;
}

export type DeliveryResult =
  | { ok: true }
  | {
      ok: false;
      /** false: do not retry (e.g. a webhook 4xx other than 408/429) */
      retryable: boolean;
      /** short, human-readable, kept as the subscription's last error; never contains secrets */
      error: string;
      /** the receiver asked for this delay (HTTP Retry-After, Telegram retry_after) */
      retryAfterMs?: number;
      /** the target no longer exists (web push 404/410): the subscription should be removed */
      gone?: boolean;
    };

export interface NotificationChannel {
  readonly name: ChannelName;
  /** null when usable; otherwise the configuration variable that is missing (subscriptions are refused with 400 naming it) */
  missingConfiguration(): string | null;
  /** null when the target is acceptable for this channel; otherwise why not (a 400 message) */
  validateTarget(target: string): Promise<string | null>;
  /** one delivery attempt, bounded by the channel's own timeout; never throws */
  deliver(notification: OutgoingNotification, target: DeliveryTarget): Promise<DeliveryResult>;
  /**
   * Channels whose targets must confirm before deliveries start (email): sends the one confirmation message
   * carrying `code`. Channels without it are confirmed when created.
   */
  sendConfirmation?(target: string, subscription: { id: string; account: string; code: string }): Promise<DeliveryResult>;
}
