/**
 * Issue 19, majors 5 and 6: subscriptions are confirmed before they deliver (an email address confirms with the
 * code mailed to it once; every other channel is confirmed when it is created, and so are the subscriptions that
 * existed before this migration), and each subscription carries its circuit breaker: consecutive failed
 * attempts and the time its deliveries are paused until.
 */
export const statements: string[] = [
  `alter table notification_subscriptions add column confirmed_at timestamptz default now()`,
  `alter table notification_subscriptions alter column confirmed_at drop default`,
  `alter table notification_subscriptions add column confirmation_code text`,
  `alter table notification_subscriptions add column consecutive_failures integer not null default 0`,
  `alter table notification_subscriptions add column paused_until timestamptz`,
  // the RabbitMQ relay takes back queued rows whose message never came to an outcome
  `create index notification_deliveries_queued on notification_deliveries (next_attempt_at) where status = 'queued'`,
];
