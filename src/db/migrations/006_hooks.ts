/**
 * Hooks analytics (issue 10): one row per hook our HooksTrampoline executed in a settlement, from its
 * `HookExecuted` events, with what the order's app data says about the hook (app code, dApp id, bridging).
 * Keyed like every event row (chain_id, block_number, log_index) so a reorg deletes rows by block range; the
 * hooks indexer keeps its checkpoint in indexer_checkpoints under the name 'hooks'.
 */
export const statements: string[] = [
  `create table hook_executions (
     chain_id integer not null,
     block_number bigint not null,
     log_index bigint not null,
     block_time timestamptz not null,
     tx_hash bytea not null check (length(tx_hash) = 32),
     order_uid bytea not null,
     hook_type text not null check (hook_type in ('pre', 'post')),
     hook_index integer not null,
     target bytea not null check (length(target) = 20),
     gas_limit numeric(78,0) not null,
     success boolean not null,
     app_hash bytea check (length(app_hash) = 32),
     app_code text,
     app_id text,
     is_bridging boolean not null default false,
     destination_chain_id text,
     destination_token_address text,
     primary key (chain_id, block_number, log_index))`,
  `create index hook_executions_time on hook_executions (chain_id, block_time desc)`,
];
