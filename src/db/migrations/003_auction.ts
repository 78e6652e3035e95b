/**
 * Batch auctions (issue 6): what a settlement submission carries, and the trades every solution proposed.
 * - `competition_settlements` gains the UIDs of the orders a submission settles (they stay out of new auctions
 *   while it is in flight), the block it landed in and when its status last changed.
 * - `proposed_trade_executions`: one row per order of each solution (reference orderbook.md §10, upstream
 *   table of the same name), so an order's place in the competition is found by index, not by scanning JSON.
 */
export const statements: string[] = [
  `alter table competition_settlements add column order_uids bytea[] not null default '{}'`,
  `alter table competition_settlements add column block_number bigint`,
  `alter table competition_settlements add column updated_at timestamptz not null default now()`,
  // submissions not yet resolved: few rows, read by every auction
  `create index competition_settlements_open on competition_settlements (chain_id) where status in ('pending', 'mined')`,

  `create table proposed_trade_executions (
     chain_id integer not null,
     auction_id bigint not null,
     solution_index integer not null,
     order_uid bytea not null check (length(order_uid) = 56),
     executed_sell numeric(78,0) not null,
     executed_buy numeric(78,0) not null,
     primary key (chain_id, auction_id, solution_index, order_uid))`,
  `create index proposed_trade_executions_order on proposed_trade_executions (chain_id, order_uid, auction_id desc)`,
];
