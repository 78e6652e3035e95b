/**
 * Stored simulation runs are capped per client (issue 14 point 12): each run records the client that asked for it
 * (`clientKey` of http/client-identity.ts: an IPv4 address or an IPv6 /64), and the oldest runs of a client beyond
 * SIMULATION_MAX_STORED_RUNS_PER_CLIENT are deleted. Runs stored before this migration have no client and are
 * pruned by age only.
 */
export const statements: string[] = [
  `alter table simulations add column client text`,
  `create index simulations_client_created_at on simulations (client, created_at)`,
];
