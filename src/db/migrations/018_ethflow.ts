/**
 * ETH-flow (issue 21): the eth-flow contracts' events, keyed like every event row (chain_id, block_number,
 * log_index) so a reorg deletes them by block range. A placement becomes an order (with `orders.true_valid_to` =
 * the user's deadline; `valid_to` stays 2^32 − 1 as the order was signed) once the order book has priced it; the
 * placement row then carries `ingested_at` and the placement error, if any. Invalidations (the user's, while live)
 * and refunds (after expiry) are separate events with different effects on the order's status.
 */
export const statements: string[] = [
  `create table ethflow_placements (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     tx_hash bytea not null check (length(tx_hash) = 32),
     block_time timestamptz not null,
     contract bytea not null check (length(contract) = 20),
     sender bytea not null check (length(sender) = 20),
     order_uid bytea not null check (length(order_uid) = 56),
     owner bytea not null check (length(owner) = 20),
     sell_token bytea not null check (length(sell_token) = 20),
     buy_token bytea not null check (length(buy_token) = 20),
     receiver bytea check (length(receiver) = 20),
     sell_amount numeric(78,0) not null,
     buy_amount numeric(78,0) not null,
     valid_to bigint not null,
     app_data bytea not null check (length(app_data) = 32),
     fee_amount numeric(78,0) not null,
     kind text not null,
     partially_fillable boolean not null,
     sell_token_balance text not null,
     buy_token_balance text not null,
     signing_scheme text not null check (signing_scheme in ('eip1271', 'presign')),
     signature bytea not null,
     quote_id numeric(20,0) not null,
     user_valid_to bigint not null,
     placement_error text,
     ingested_at timestamptz,
     primary key (chain_id, block_number, log_index))`,
  `create index ethflow_placements_uid on ethflow_placements (chain_id, order_uid)`,
  `create index ethflow_placements_sender on ethflow_placements (chain_id, sender)`,
  `create index ethflow_placements_pending on ethflow_placements (chain_id) where ingested_at is null`,
  `create table ethflow_invalidations (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     tx_hash bytea not null check (length(tx_hash) = 32),
     order_uid bytea not null,
     primary key (chain_id, block_number, log_index))`,
  `create index ethflow_invalidations_uid on ethflow_invalidations (chain_id, order_uid)`,
  `create table ethflow_refunds (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     tx_hash bytea not null check (length(tx_hash) = 32),
     order_uid bytea not null,
     refunder bytea not null check (length(refunder) = 20),
     primary key (chain_id, block_number, log_index))`,
  `create index ethflow_refunds_uid on ethflow_refunds (chain_id, order_uid)`,
  // the user's deadline of an eth-flow order (its signed valid_to is 2^32 − 1); null: valid_to is the deadline
  `alter table orders add column true_valid_to bigint`,
  `create index orders_true_valid_to on orders (chain_id, true_valid_to) where true_valid_to is not null`,
  `alter table indexer_sources drop constraint indexer_sources_kind_check`,
  `alter table indexer_sources add constraint indexer_sources_kind_check check (kind in ('settlement', 'token', 'pool', 'factory', 'ethflow'))`,
];
