/**
 * Issue 19 (the adversarial review):
 * - `leadership_epochs`: the epoch of each leadership name, taken (incremented) by every replica that becomes its
 *   leader; recording a settlement transaction checks its leader's epoch is still current (a fence against a
 *   leader that lost its lock without noticing yet).
 * - an index to find the auction of a block (the affiliate program values a trade at its auction's native price).
 */
export const statements: string[] = [
  `create table leadership_epochs (
     name text primary key,
     epoch bigint not null,
     updated_at timestamptz not null default now())`,
  `create index solver_competitions_start_block on solver_competitions (chain_id, start_block)`,
];
