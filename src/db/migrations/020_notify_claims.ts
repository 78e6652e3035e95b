/**
 * Issue 19, outbox throughput: the dispatcher's claim reads only what it may take instead of every due row.
 * Fresh deliveries (never attempted) and retries each have their own partial index in due order; the pending
 * rows of one subscription are in due order too, for the one suspect delivery a failing subscription may have.
 */
export const statements: string[] = [
  `create index notification_deliveries_fresh on notification_deliveries (next_attempt_at) where status = 'pending' and attempts = 0`,
  `create index notification_deliveries_retry on notification_deliveries (next_attempt_at) where status = 'pending' and attempts > 0`,
  `create index notification_deliveries_pending on notification_deliveries (subscription_id, next_attempt_at) where status = 'pending'`,
];
