/**
 * Bundle simulations (issue 7, auxiliary API): every run of POST /{chainId}/simulation/simulateBundle is kept so
 * that the `link` of its result (GET /{chainId}/simulation/{id}) shows the request and the result later.
 * `request` and `result` are the wire JSON; old runs are pruned by age (created_at index).
 */
export const statements: string[] = [
  `create table simulations (
     id uuid primary key,
     chain_id integer not null,
     provider text not null,
     block_number bigint,
     status boolean not null,
     request jsonb not null,
     result jsonb not null,
     created_at timestamptz not null default now())`,
  `create index simulations_created_at on simulations (created_at)`,
];
