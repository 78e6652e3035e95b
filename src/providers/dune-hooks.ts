/**
 * Hooks of networks we do not index ourselves, from the external analytics provider (Dune, key
 * `ANALYTICS_API_KEY`; reference auxiliary.md §3.8, §4). Each request runs the saved query with its own
 * parameters and reads the rows of **its own execution** (upstream reads the query's latest result instead, so
 * concurrent requests with other parameters receive each other's rows):
 *
 *   POST {base}/api/v1/query/{queryId}/execute        {query_parameters: {blockchain, period}}  → {execution_id, state}
 *   GET  {base}/api/v1/execution/{id}/results?limit=&offset=   (polled until is_execution_finished, at most maxWaitTimeMs)
 *        → {execution_id, state, is_execution_finished, result?: {rows: [...]}}
 *
 * Every call carries `X-DUNE-API-KEY` and a timeout. A row that does not fit the reference shape is skipped
 * (one bad row must not fail the whole answer, as it does upstream).
 */
import type { ExternalHooksSource, HookRow, HooksQuery } from './ports/hooks.js';
import { DUNE_URL } from './dune-pools.js';
import { expectOk, isRecord, malformed, providerRequest, type FetchLike } from './provider-http.js';
import { ProviderError } from './data-source.js';

/** The saved hooks query upstream runs (its `DEFAULT_QUERY_ID`). */
export const DEFAULT_HOOKS_QUERY_ID = 5302473;

export interface DuneHooksOptions {
  apiKey: string;
  queryId?: number;
  baseUrl?: string;
  /** per HTTP call (default 10 s) */
  timeoutMs?: number;
  /** between result polls (default 2 s, as upstream) */
  pollMs?: number;
  fetch?: FetchLike;
  onSkipped?: (count: number) => void;
}

const NAME = 'dune';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : null);

/** One analytics row as a HookRow (every key present, null where unknown), or null when it does not fit. */
export function hookFromRow(row: Record<string, unknown>): HookRow | null {
  const success = bool(row.success);
  const hookType = row.hook_type === 'pre' || row.hook_type === 'post' ? row.hook_type : null;
  const gasLimit = typeof row.gas_limit === 'number' ? row.gas_limit : typeof row.gas_limit === 'string' && /^\d+$/.test(row.gas_limit) ? Number(row.gas_limit) : null;
  const target = str(row.target);
  const txHash = str(row.tx_hash);
  const blockTime = str(row.block_time);
  if (success === null || hookType === null || gasLimit === null || !target || !txHash || !blockTime) return null;
  return {
    environment: str(row.environment) ?? 'prod',
    block_time: blockTime,
    is_bridging: bool(row.is_bridging) ?? false,
    success,
    app_code: str(row.app_code),
    destination_chain_id: str(row.destination_chain_id),
    destination_token_address: str(row.destination_token_address),
    hook_type: hookType,
    app_id: str(row.app_id),
    target,
    gas_limit: gasLimit,
    app_hash: str(row.app_hash),
    tx_hash: txHash,
  };
}

export class DuneHooks implements ExternalHooksSource {
  private readonly baseUrl: string;

  constructor(private readonly options: DuneHooksOptions) {
    this.baseUrl = (options.baseUrl ?? DUNE_URL).replace(/\/+$/, '');
  }

  async hooks(query: HooksQuery): Promise<HookRow[]> {
    const deadline = Date.now() + query.maxWaitTimeMs;
    const executionId = await this.execute(query);
    for (;;) {
      const url = `${this.baseUrl}/api/v1/execution/${encodeURIComponent(executionId)}/results?limit=${query.limit}&offset=${query.offset}`;
      const res = await providerRequest(NAME, url, { headers: this.headers() }, this.http());
      expectOk(NAME, res, 'execution results');
      const body = res.body;
      if (!isRecord(body)) throw malformed(NAME, 'execution results: expected an object');
      if (body.is_execution_finished === true) {
        if (body.state !== 'QUERY_STATE_COMPLETED') throw new ProviderError(NAME, 'unavailable', `the hooks query ended in state ${String(body.state)}`);
        if (!isRecord(body.result) || !Array.isArray(body.result.rows)) throw malformed(NAME, 'execution results: expected {result: {rows: [...]}}');
        return this.rows(body.result.rows);
      }
      if (Date.now() >= deadline) throw new ProviderError(NAME, 'timeout', `the hooks query did not finish within ${query.maxWaitTimeMs} ms`);
      await new Promise((r) => setTimeout(r, Math.min(this.options.pollMs ?? 2000, Math.max(0, deadline - Date.now()))));
    }
  }

  private async execute(query: HooksQuery): Promise<string> {
    const url = `${this.baseUrl}/api/v1/query/${this.options.queryId ?? DEFAULT_HOOKS_QUERY_ID}/execute`;
    const body = JSON.stringify({ query_parameters: { blockchain: query.blockchain, period: query.period } });
    const res = await providerRequest(NAME, url, { method: 'POST', headers: { ...this.headers(), 'content-type': 'application/json' }, body }, this.http());
    expectOk(NAME, res, 'query execution');
    const id = isRecord(res.body) ? str(res.body.execution_id) : null;
    if (!id) throw malformed(NAME, 'query execution: expected {execution_id}');
    return id;
  }

  private rows(raw: unknown[]): HookRow[] {
    const rows: HookRow[] = [];
    let skipped = 0;
    for (const r of raw) {
      const row = isRecord(r) ? hookFromRow(r) : null;
      if (row) rows.push(row);
      else skipped++;
    }
    if (skipped > 0) this.options.onSkipped?.(skipped);
    return rows;
  }

  private headers(): Record<string, string> {
    return { 'X-DUNE-API-KEY': this.options.apiKey };
  }

  private http() {
    return { timeoutMs: this.options.timeoutMs ?? 10_000, fetch: this.options.fetch };
  }
}
