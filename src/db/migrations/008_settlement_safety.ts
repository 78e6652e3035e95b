/**
 * Settlement safety (issue 14):
 * - `competition_settlements` learns how its transaction is tracked: the nonce it was signed with, every hash
 *   sent for that nonce (the first one and its replacements or cancellation), the fees of the latest, the block
 *   it was sent (or last replaced) in, the block the submission was recorded in, and a hash of the solution
 *   (its settle calldata without the auction id) so a solution that reverted on chain is not sent again.
 * - `order_exclusions`: orders left out of auctions until a block because they made a settlement's simulation
 *   revert (the rest of their batch settles without them).
 */
export const statements: string[] = [
  `alter table competition_settlements add column nonce bigint`,
  `alter table competition_settlements add column tx_hashes bytea[] not null default '{}'`,
  `alter table competition_settlements add column max_fee_per_gas numeric(78,0)`,
  `alter table competition_settlements add column max_priority_fee_per_gas numeric(78,0)`,
  `alter table competition_settlements add column sent_block bigint`,
  `alter table competition_settlements add column created_block bigint`,
  `alter table competition_settlements add column solution_hash bytea`,
  `create index competition_settlements_reverted_solution on competition_settlements (chain_id, solution_hash) where status = 'reverted'`,

  `create table order_exclusions (
     chain_id integer not null,
     order_uid bytea not null check (length(order_uid) = 56),
     until_block bigint not null,
     reason text not null,
     created_at timestamptz not null default now(),
     primary key (chain_id, order_uid))`,
];
