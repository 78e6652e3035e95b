/**
 * Pool yields from an external analytics provider (Dune, key `ANALYTICS_API_KEY`; reference auxiliary.md §3.7,
 * §4). Upstream reads a table `cow_amm_competitor_info (contract_address, chain_id, project, apr, fee, tvl,
 * volume)` produced outside the service; here the same rows come from a saved Dune query's latest result:
 *
 *   GET {base}/api/v1/query/{queryId}/results?limit=1000&offset={n}    header X-DUNE-API-KEY
 *   → { execution_id, query_id, state, is_execution_finished, execution_started_at, execution_ended_at,
 *       result: { rows: [...], metadata: { column_names, row_count, total_row_count, ... } }, next_offset?, next_uri? }
 *
 * Pages are read until `total_row_count`, a short page, or `maxRows`. Rows that do not fit the shape are
 * skipped and counted (one bad row must not fail every request, as upstream does). Reading the *latest stored
 * result* spends no execution credits. Cache the `DuneQueryRows` source (the whole table) rather than each
 * pool query: `new DunePools({ rows: cached(new DuneQueryRows(...), 300_000, 60_000) })`.
 */
import type { Address } from 'viem';
import type { DataSource } from './data-source.js';
import type { PoolQuery, PoolRecord, PoolSource } from './ports/market.js';
import { expectOk, isRecord, malformed, parseAddress, providerRequest, type FetchLike } from './provider-http.js';

export const DUNE_URL = 'https://api.dune.com';

export interface DuneQueryRowsOptions {
  apiKey: string;
  queryId: number;
  baseUrl?: string;
  /** rows per page (default 1000) */
  pageSize?: number;
  /** stop after this many rows (default 100 000) */
  maxRows?: number;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'dune';

/** The latest result rows of one saved query (the query argument is ignored: one table). */
export class DuneQueryRows implements DataSource<void, Array<Record<string, unknown>>> {
  readonly name = NAME;
  private readonly baseUrl: string;

  constructor(private readonly options: DuneQueryRowsOptions) {
    this.baseUrl = (options.baseUrl ?? DUNE_URL).replace(/\/+$/, '');
  }

  async lookup(): Promise<Array<Record<string, unknown>> | null> {
    const pageSize = this.options.pageSize ?? 1000;
    const maxRows = this.options.maxRows ?? 100_000;
    const rows: Array<Record<string, unknown>> = [];
    for (let offset = 0; offset < maxRows; offset += pageSize) {
      const url = `${this.baseUrl}/api/v1/query/${this.options.queryId}/results?limit=${pageSize}&offset=${offset}`;
      const res = await providerRequest(NAME, url, { headers: { 'X-DUNE-API-KEY': this.options.apiKey } }, { timeoutMs: this.options.timeoutMs ?? 10_000, fetch: this.options.fetch });
      if (res.status === 404) return rows.length > 0 ? rows : null;
      expectOk(NAME, res, 'query results');
      const body = res.body;
      if (!isRecord(body) || !isRecord(body.result) || !Array.isArray(body.result.rows)) throw malformed(NAME, 'query results: expected {result: {rows: [...]}}');
      const page = body.result.rows.filter(isRecord);
      rows.push(...page);
      const total = isRecord(body.result.metadata) && typeof body.result.metadata.total_row_count === 'number' ? body.result.metadata.total_row_count : null;
      if (page.length < pageSize || (total !== null && rows.length >= total) || body.next_uri === null) break;
    }
    return rows.length > 0 ? rows : null;
  }
}

const finiteOrNull = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** One analytics row as a spec Pool, or null when it does not fit. */
export function poolFromRow(row: Record<string, unknown>): PoolRecord | null {
  const address = parseAddress(row.contract_address);
  const chainId = finiteOrNull(row.chain_id);
  if (!address || chainId === null || !Number.isInteger(chainId)) return null;
  const project = typeof row.project === 'string' ? row.project.replace(/^"+|"+$/g, '').trim() : '';
  if (project === '') return null;
  const apr = finiteOrNull(row.apr);
  return {
    contract_address: address,
    chain_id: chainId,
    project,
    apr: apr === null ? null : Math.round(apr * 1e6) / 1e6,
    fee: finiteOrNull(row.fee),
    tvl: finiteOrNull(row.tvl),
    volume: finiteOrNull(row.volume),
  };
}

export interface DunePoolsOptions {
  rows: DataSource<void, Array<Record<string, unknown>>>;
  /** told how many rows were skipped as malformed */
  onSkipped?: (count: number) => void;
}

/** `PoolSource` over the analytics table. */
export class DunePools implements PoolSource {
  readonly name = NAME;
  constructor(private readonly options: DunePoolsOptions) {}

  async lookup(query: PoolQuery): Promise<PoolRecord[] | null> {
    const rows = await this.options.rows.lookup();
    if (!rows) return null;
    let skipped = 0;
    const pools = new Map<Address, PoolRecord>();
    for (const row of rows) {
      const pool = poolFromRow(row);
      if (!pool) {
        skipped++;
        continue;
      }
      if (pool.chain_id === query.chainId && !pools.has(pool.contract_address)) pools.set(pool.contract_address, pool);
    }
    if (skipped > 0) this.options.onSkipped?.(skipped);
    let out: PoolRecord[];
    if (query.addresses) {
      out = query.addresses.map((a) => pools.get(a)).filter((p): p is PoolRecord => p !== undefined);
    } else {
      out = [...pools.values()].sort((a, b) => (b.tvl ?? -1) - (a.tvl ?? -1));
    }
    out = out.slice(0, query.limit);
    return out.length > 0 ? out : null;
  }
}
