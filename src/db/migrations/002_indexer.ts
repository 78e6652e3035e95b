/**
 * Indexer storage beyond the order-book tables: ERC-20 transfers and the balances they add up to, Uniswap-V2
 * pools with their Sync/Swap events, and the contracts each chain's indexer follows. Every row carries chain_id;
 * event rows are keyed (chain_id, block_number, log_index) so a reorg deletes them by block range.
 */
export const statements: string[] = [
  `create table erc20_transfers (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     token bytea not null check (length(token) = 20),
     from_address bytea not null check (length(from_address) = 20),
     to_address bytea not null check (length(to_address) = 20),
     value numeric(78,0) not null,
     kind text not null check (kind in ('transfer', 'deposit', 'withdrawal')),
     tx_hash bytea not null check (length(tx_hash) = 32),
     primary key (chain_id, block_number, log_index))`,
  `create index erc20_transfers_token on erc20_transfers (chain_id, token, block_number desc)`,
  `create index erc20_transfers_from on erc20_transfers (chain_id, from_address, block_number desc)`,
  `create index erc20_transfers_to on erc20_transfers (chain_id, to_address, block_number desc)`,

  // Net of every indexed transfer (mints and burns included; the zero address is not a holder). Exact for
  // tokens indexed from their deployment; rows reaching zero are deleted.
  `create table token_holder_balances (
     chain_id integer not null,
     token bytea not null check (length(token) = 20),
     holder bytea not null check (length(holder) = 20),
     balance numeric(78,0) not null,
     primary key (chain_id, token, holder))`,
  `create index token_holder_balances_top on token_holder_balances (chain_id, token, balance desc)`,
  `create index token_holder_balances_holder on token_holder_balances (chain_id, holder)`,

  `create table amm_pools (
     chain_id integer not null,
     address bytea not null check (length(address) = 20),
     token0 bytea not null check (length(token0) = 20),
     token1 bytea not null check (length(token1) = 20),
     factory bytea check (length(factory) = 20),
     created_block bigint,
     primary key (chain_id, address))`,
  `create index amm_pools_token0 on amm_pools (chain_id, token0)`,
  `create index amm_pools_token1 on amm_pools (chain_id, token1)`,

  `create table amm_syncs (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     pool bytea not null check (length(pool) = 20),
     reserve0 numeric(78,0) not null,
     reserve1 numeric(78,0) not null,
     block_timestamp timestamptz not null,
     primary key (chain_id, block_number, log_index))`,
  `create index amm_syncs_pool_time on amm_syncs (chain_id, pool, block_timestamp desc)`,

  `create table amm_swaps (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     pool bytea not null check (length(pool) = 20),
     sender bytea not null check (length(sender) = 20),
     recipient bytea not null check (length(recipient) = 20),
     amount0_in numeric(78,0) not null,
     amount1_in numeric(78,0) not null,
     amount0_out numeric(78,0) not null,
     amount1_out numeric(78,0) not null,
     tx_hash bytea not null check (length(tx_hash) = 32),
     block_timestamp timestamptz not null,
     primary key (chain_id, block_number, log_index))`,
  `create index amm_swaps_pool_time on amm_swaps (chain_id, pool, block_timestamp desc)`,
  `create index amm_swaps_time on amm_swaps (chain_id, block_timestamp desc)`,

  // The contracts an indexer follows. Their logs are in the database from from_block up to the checkpoint when
  // backfilled_to is null (live), else up to backfilled_to: a contract that appears later, or comes back after
  // a pause, is back-filled up to the checkpoint before it joins the live ranges.
  `create table indexer_sources (
     chain_id integer not null,
     name text not null,
     address bytea not null check (length(address) = 20),
     kind text not null check (kind in ('settlement', 'token', 'pool', 'factory')),
     from_block bigint not null,
     backfilled_to bigint,
     primary key (chain_id, name, address, kind))`,
];
