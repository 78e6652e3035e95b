/**
 * Issue 19, outbox throughput: a claim reads only what it may take instead of every due row. Fresh deliveries
 * (never attempted) and retries each have their own partial index in due order, and queued rows already have
 * theirs; together they replace the index of all pending rows, one index fewer to write at every claim (the
 * first due delivery of a failing subscription is found through its subscription's pending rows).
 */
export const statements: string[] = [
  `create index notification_deliveries_fresh on notification_deliveries (next_attempt_at) where status = 'pending' and attempts = 0`,
  `create index notification_deliveries_retry on notification_deliveries (next_attempt_at) where status = 'pending' and attempts > 0`,
  `drop index notification_deliveries_due`,
];
