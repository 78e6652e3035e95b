/**
 * Issue 23 (fees): the fee policies each order of a submitted solution was charged under, kept per (auction,
 * order) as production keeps them (`fee_policies`), with the solution's uniform prices of the order's two tokens
 * and the engine's network fee: the order book reads each trade's protocol fees back from its executed amounts
 * and its `executedFee` from these. `recipients` names the partner of each policy ('' for the protocol's), for
 * the partner-fee accounts endpoint (GIN-indexed).
 */
export const statements: string[] = [
  `create table order_fee_records (
     chain_id integer not null,
     auction_id bigint not null,
     order_uid bytea not null check (length(order_uid) = 56),
     policies text not null,
     recipients text[] not null default '{}',
     sell_price numeric(78,0) not null,
     buy_price numeric(78,0) not null,
     network_fee numeric(78,0) not null,
     created_at timestamptz not null default now(),
     primary key (chain_id, auction_id, order_uid))`,
  `create index order_fee_records_order on order_fee_records (chain_id, order_uid)`,
  `create index order_fee_records_recipients on order_fee_records using gin (recipients)`,
];
