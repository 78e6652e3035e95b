/**
 * Hooks of networks we do not index ourselves, from the external analytics provider (Dune, key
 * `ANALYTICS_API_KEY`, base URL `ANALYTICS_API_URL`; reference auxiliary.md §3.8, §4). The saved query is run
 * with the (blockchain, period) parameters and the rows of **that execution** are read (upstream reads the
 * query's latest result instead, so concurrent requests with other parameters receive each other's rows):
 *
 *   POST {base}/api/v1/query/{queryId}/execute        {query_parameters: {blockchain, period}}  → {execution_id, state}
 *   GET  {base}/api/v1/execution/{id}/results?limit=&offset=   (polled until is_execution_finished, then paged)
 *        → {execution_id, state, is_execution_finished, result?: {rows: [...]}}
 *
 * Each execution is paid for, so requests never start one each: the rows of a (blockchain, period) are kept for
 * 5 minutes (`cacheMs`) and pages are cut from them; while an execution runs, every request for the same pair
 * waits on it (single flight); a failed execution is remembered for 30 s (`failureCacheMs`) so a failing query is
 * not re-run per request. A request waits at most its `maxWaitTimeMs`, capped at 30 s; the execution itself
 * goes on (polled up to 5 min, one at a time per pair) and fills the cache for the next request. At most
 * `maxRows` rows are kept per pair, so memory is bounded by the reference's 6 blockchains × 7 periods.
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

/** The longest a request waits for an execution, whatever `maxWaitTimeMs` it asks (and the longest one is polled). */
export const MAX_HOOKS_WAIT_MS = 30_000;

export interface DuneHooksOptions {
  apiKey: string;
  queryId?: number;
  baseUrl?: string;
  /** per HTTP call (default 10 s) */
  timeoutMs?: number;
  /** between result polls (default 2 s, as upstream) */
  pollMs?: number;
  /** how long the rows of a (blockchain, period) are served from memory (default 5 min) */
  cacheMs?: number;
  /** how long a failed execution is answered with its error before it is run again (default 30 s) */
  failureCacheMs?: number;
  /** rows read and kept per (blockchain, period) (default 20,000) */
  maxRows?: number;
  /** the longest a request waits (default and at most MAX_HOOKS_WAIT_MS) */
  maxWaitMs?: number;
  /** the longest one execution is polled, in the background once no request waits any more (default 5 min) */
  executionTimeoutMs?: number;
  /** rows per results page (default 1,000) */
  pageSize?: number;
  /** clock (ms), for tests */
  now?: () => number;
  fetch?: FetchLike;
  onSkipped?: (count: number) => void;
  /** called once per execution started (for metrics and tests) */
  onExecute?: (blockchain: string, period: string) => void;
}

interface CachedRows {
  expiresAt: number;
  rows?: HookRow[];
  error?: unknown;
}

const NAME = 'dune';

/** The flight's result, or a timeout error after `ms` (the flight itself goes on). */
function waitAtMost<T>(flight: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProviderError(NAME, 'timeout', `the hooks query did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([flight, timeout]).finally(() => clearTimeout(timer));
}

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
  private readonly cache = new Map<string, CachedRows>();
  private readonly inFlight = new Map<string, Promise<HookRow[]>>();

  constructor(private readonly options: DuneHooksOptions) {
    this.baseUrl = (options.baseUrl ?? DUNE_URL).replace(/\/+$/, '');
  }

  async hooks(query: HooksQuery): Promise<HookRow[]> {
    const key = `${query.blockchain}\u0000${query.period}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > this.now()) {
      if (cached.rows) return cached.rows.slice(query.offset, query.offset + query.limit);
      throw cached.error;
    }
    let flight = this.inFlight.get(key);
    if (!flight) {
      flight = this.load(key, query.blockchain, query.period);
      this.inFlight.set(key, flight);
      flight.catch(() => {});
    }
    const rows = await waitAtMost(flight, Math.min(Math.max(0, query.maxWaitTimeMs), this.maxWaitMs()));
    return rows.slice(query.offset, query.offset + query.limit);
  }

  private async load(key: string, blockchain: string, period: string): Promise<HookRow[]> {
    try {
      const rows = await this.execution(blockchain, period);
      this.cache.set(key, { rows, expiresAt: this.now() + (this.options.cacheMs ?? 5 * 60_000) });
      return rows;
    } catch (error) {
      this.cache.set(key, { error, expiresAt: this.now() + (this.options.failureCacheMs ?? 30_000) });
      throw error;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** Runs the query once and reads every row of that execution (up to `maxRows`). */
  private async execution(blockchain: string, period: string): Promise<HookRow[]> {
    const timeoutMs = this.options.executionTimeoutMs ?? 5 * 60_000;
    const deadline = Date.now() + timeoutMs;
    const executionId = await this.execute(blockchain, period);
    const pageSize = this.options.pageSize ?? 1000;
    const maxRows = this.options.maxRows ?? 20_000;
    const rows: HookRow[] = [];
    for (let offset = 0; offset < maxRows; ) {
      const limit = Math.min(pageSize, maxRows - offset);
      const url = `${this.baseUrl}/api/v1/execution/${encodeURIComponent(executionId)}/results?limit=${limit}&offset=${offset}`;
      const res = await providerRequest(NAME, url, { headers: this.headers() }, this.http());
      expectOk(NAME, res, 'execution results');
      const body = res.body;
      if (!isRecord(body)) throw malformed(NAME, 'execution results: expected an object');
      if (body.is_execution_finished !== true) {
        if (offset > 0) throw malformed(NAME, 'execution results: a finished execution reads as unfinished');
        if (Date.now() >= deadline) throw new ProviderError(NAME, 'timeout', `the hooks query did not finish within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, Math.min(this.options.pollMs ?? 2000, Math.max(0, deadline - Date.now()))));
        continue;
      }
      if (body.state !== 'QUERY_STATE_COMPLETED') throw new ProviderError(NAME, 'unavailable', `the hooks query ended in state ${String(body.state)}`);
      if (!isRecord(body.result) || !Array.isArray(body.result.rows)) throw malformed(NAME, 'execution results: expected {result: {rows: [...]}}');
      const page = body.result.rows;
      rows.push(...this.rows(page.slice(0, limit)));
      if (page.length < limit) break;
      offset += limit;
    }
    return rows;
  }

  private async execute(blockchain: string, period: string): Promise<string> {
    this.options.onExecute?.(blockchain, period);
    const url = `${this.baseUrl}/api/v1/query/${this.options.queryId ?? DEFAULT_HOOKS_QUERY_ID}/execute`;
    const body = JSON.stringify({ query_parameters: { blockchain, period } });
    const res = await providerRequest(NAME, url, { method: 'POST', headers: { ...this.headers(), 'content-type': 'application/json' }, body }, this.http());
    expectOk(NAME, res, 'query execution');
    const id = isRecord(res.body) ? str(res.body.execution_id) : null;
    if (!id) throw malformed(NAME, 'query execution: expected {execution_id}');
    return id;
  }

  private maxWaitMs(): number {
    return Math.min(this.options.maxWaitMs ?? MAX_HOOKS_WAIT_MS, MAX_HOOKS_WAIT_MS);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
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
