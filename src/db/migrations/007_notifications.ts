/**
 * Notifications (issue 11): what was produced from chain truth, who subscribed, and the delivery outbox.
 * - `notifications`: one row per event, keyed by a deterministic id derived from its trigger, so producing twice
 *   stores once.
 * - `notification_subscriptions`: a channel + target per account (unique), with the webhook secret and the last
 *   delivery error shown in the subscription list.
 * - `notification_deliveries`: the transactional outbox, one row per (notification, subscription), written in the
 *   same transaction as the notification; dispatchers claim due rows with FOR UPDATE SKIP LOCKED.
 * - `notification_checkpoints`: how far the producer of each chain has looked.
 */
export const statements: string[] = [
  `create table notifications (
     id text primary key,
     chain_id integer not null,
     account bytea not null check (length(account) = 20),
     type text not null check (type in ('order_filled', 'order_partially_filled', 'order_expired', 'order_cancelled', 'insufficient_balance', 'price_improvement')),
     message text not null,
     metadata jsonb not null,
     created_at timestamptz not null,
     produced_at timestamptz not null default now())`,
  `create index notifications_account on notifications (account, created_at desc, id desc)`,

  `create table notification_subscriptions (
     id text primary key,
     account bytea not null check (length(account) = 20),
     channel text not null check (channel in ('webhook', 'telegram', 'webpush', 'email')),
     target text not null,
     types text[],
     secret text,
     created_at timestamptz not null default now(),
     last_error text,
     last_error_at timestamptz,
     unique (account, channel, target))`,

  `create table notification_deliveries (
     notification_id text not null references notifications (id) on delete cascade,
     subscription_id text not null references notification_subscriptions (id) on delete cascade,
     status text not null default 'pending' check (status in ('pending', 'queued', 'delivered', 'dead')),
     attempts integer not null default 0,
     next_attempt_at timestamptz not null default now(),
     created_at timestamptz not null default now(),
     delivered_at timestamptz,
     last_error text,
     primary key (notification_id, subscription_id))`,
  `create index notification_deliveries_due on notification_deliveries (next_attempt_at) where status = 'pending'`,
  `create index notification_deliveries_subscription on notification_deliveries (subscription_id, status)`,

  `create table notification_checkpoints (
     chain_id integer primary key,
     block_number bigint not null,
     block_hash bytea not null,
     block_timestamp bigint not null,
     order_event_id bigint not null default 0,
     cancellations_since timestamptz not null,
     updated_at timestamptz not null default now())`,
  // API cancellations are looked for by time
  `create index orders_cancelled on orders (chain_id, cancellation_timestamp) where cancellation_timestamp is not null`,
  `create index orders_valid_to on orders (chain_id, valid_to)`,
  // the auction's exclusions for balance or allowance, scanned by id
  `create index order_events_insufficient on order_events (chain_id, id) where label = 'invalid' and reason in ('insufficient_balance', 'insufficient_allowance')`,
];
