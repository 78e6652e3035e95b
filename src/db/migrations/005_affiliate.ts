/**
 * The affiliate program (issue 10): our own content store for codes and payouts, trader bindings, and the USD
 * value of each trade fixed once, at trade time.
 *
 * - `affiliate_codes`: one code per wallet and one wallet per code, both enforced by unique constraints (never
 *   read-then-write); the reward terms are copied from the configuration at registration, so changing the
 *   defaults never rewrites existing terms.
 * - `affiliate_bindings`: a trader is bound to at most one code (primary key), by the first order carrying it.
 * - `affiliate_trade_volumes`: one row per indexed trade with its USD volume; it references the trade, so a reorg
 *   that deletes the trade deletes its value too (and the re-indexed trade is valued again). `order_created_at`
 *   (when the order is ours) decides whether a trade comes after a binding: block times are whole seconds and
 *   may lag the wall clock, so the binding order's own trade could otherwise look older than the binding.
 * - `affiliate_payouts`: what the operator paid, per address and role.
 * - `affiliate_progress`: how far the background loop got (order cursor; per chain, the indexed block covered).
 * USD amounts are double precision: they are reported as JSON numbers and summed over at most a few thousand rows.
 */
export const statements: string[] = [
  `create table affiliate_codes (
     code text primary key check (code ~ '^[A-Z0-9_-]{5,20}$'),
     wallet bytea not null unique check (length(wallet) = 20),
     signed_message bytea not null,
     enabled boolean not null default true,
     reward_amount double precision not null,
     trigger_volume double precision not null check (trigger_volume > 0),
     time_cap_days integer not null,
     volume_cap double precision not null,
     revenue_split_affiliate_pct double precision not null,
     revenue_split_trader_pct double precision not null,
     revenue_split_dao_pct double precision not null,
     created_at timestamptz not null default now())`,

  `create table affiliate_bindings (
     trader bytea primary key check (length(trader) = 20),
     code text not null references affiliate_codes (code),
     chain_id integer not null,
     order_uid bytea not null,
     linked_since timestamptz not null)`,
  `create index affiliate_bindings_code on affiliate_bindings (code)`,

  `create table affiliate_trade_volumes (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     trader bytea not null,
     block_timestamp timestamptz not null,
     order_created_at timestamptz,
     usd_volume double precision not null,
     priced boolean not null,
     primary key (chain_id, block_number, log_index),
     foreign key (chain_id, block_number, log_index) references trades (chain_id, block_number, log_index) on delete cascade)`,
  `create index affiliate_trade_volumes_trader on affiliate_trade_volumes (trader, block_timestamp)`,

  `create table affiliate_payouts (
     id bigserial primary key,
     address bytea not null check (length(address) = 20),
     role text not null check (role in ('affiliate', 'trader')),
     usd double precision not null check (usd > 0),
     note text,
     created_at timestamptz not null default now())`,
  `create index affiliate_payouts_address on affiliate_payouts (address, role)`,

  `create table affiliate_progress (
     name text primary key,
     position timestamptz,
     block_number bigint,
     block_timestamp timestamptz,
     updated_at timestamptz not null default now())`,
];
