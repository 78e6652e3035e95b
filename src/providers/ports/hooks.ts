/** What the hooks analytics (aux/hooks) asks of an external provider, and the rows it answers with. */

/** One executed hook, as the reference row (null where unknown). */
export interface HookRow {
  environment: string;
  /** ISO 8601 UTC */
  block_time: string;
  is_bridging: boolean;
  success: boolean;
  app_code: string | null;
  destination_chain_id: string | null;
  destination_token_address: string | null;
  hook_type: 'pre' | 'post';
  app_id: string | null;
  target: string;
  gas_limit: number;
  app_hash: string | null;
  tx_hash: string;
}

export interface HooksQuery {
  blockchain: string;
  period: string;
  limit: number;
  offset: number;
  /** how long an external query may take (ms) */
  maxWaitTimeMs: number;
}

/** Hooks from an external analytics provider, for networks we do not index ourselves. */
export interface ExternalHooksSource {
  hooks(query: HooksQuery): Promise<HookRow[]>;
}
