/**
 * Affiliate and trader statistics from an external analytics provider (Dune, key `ANALYTICS_API_KEY`; reference
 * auxiliary.md §3.3, §3.8, §4): a saved query per statistic taking an `address` parameter, executed for the
 * address asked, and **the result of that execution** read back (upstream reads the query's latest stored
 * result instead, so concurrent requests for different addresses can receive each other's rows — §3.8):
 *
 *   POST {base}/api/v1/query/{queryId}/execute   {query_parameters: {address}}   header X-DUNE-API-KEY → {execution_id}
 *   GET  {base}/api/v1/execution/{execution_id}/results?limit=100                → {is_execution_finished, state,
 *        execution_started_at, execution_ended_at, submitted_at, result: {rows}}
 *
 * Rows are checked field by field (a missing or non-numeric number is a malformed answer, never a silent 0);
 * only a row of the address asked is used. Each execution spends credits: wrap the source in `cached()`.
 */
import type { Address } from 'viem';
import type { AffiliateStats, AffiliateStatsSource, TraderStats } from './ports/affiliate.js';
import { ProviderError } from './data-source.js';
import { DUNE_URL } from './dune-pools.js';
import { expectOk, isRecord, malformed, providerRequest, type FetchLike } from './provider-http.js';

export interface AnalyticsAffiliateStatsOptions {
  apiKey: string;
  affiliateStatsQueryId: number | null;
  traderStatsQueryId: number | null;
  baseUrl?: string;
  /** per HTTP call */
  timeoutMs?: number;
  /** how long to wait for an execution to finish (default 30 s) */
  maxWaitMs?: number;
  /** between status polls (default 1 s) */
  pollMs?: number;
  fetch?: FetchLike;
}

const NAME = 'analytics';
const AFFILIATE_NUMBERS = ['total_volume', 'trigger_volume', 'total_earned', 'paid_out', 'next_payout', 'left_to_next_reward', 'active_traders', 'total_traders'] as const;
const TRADER_NUMBERS = ['eligible_volume', 'left_to_next_rewards', 'trigger_volume', 'total_earned', 'paid_out', 'next_payout'] as const;

function numberField(row: Record<string, unknown>, key: string): number {
  const raw = row[key];
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw malformed(NAME, `row field ${key}: expected a number`);
  return n;
}

function isoField(row: Record<string, unknown>, key: string, nullable = false): string | null {
  const raw = row[key];
  if (raw === null && nullable) return null;
  const t = typeof raw === 'string' ? Date.parse(raw.replace(' UTC', 'Z').replace(' ', 'T')) : NaN;
  if (Number.isNaN(t)) throw malformed(NAME, `row field ${key}: expected a timestamp`);
  return new Date(t).toISOString();
}

function textField(row: Record<string, unknown>, key: string): string {
  if (typeof row[key] !== 'string') throw malformed(NAME, `row field ${key}: expected a string`);
  return row[key] as string;
}

export class AnalyticsAffiliateStats implements AffiliateStatsSource {
  readonly name = NAME;
  private readonly base: string;
  constructor(private readonly options: AnalyticsAffiliateStatsOptions) {
    this.base = (options.baseUrl ?? DUNE_URL).replace(/\/+$/, '');
  }

  private call(path: string, body?: unknown) {
    return providerRequest(
      NAME,
      `${this.base}${path}`,
      { method: body === undefined ? 'GET' : 'POST', headers: { 'X-DUNE-API-KEY': this.options.apiKey }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
      { timeoutMs: this.options.timeoutMs ?? 10_000, fetch: this.options.fetch },
    );
  }

  /** Executes the query for one address and returns that execution's row of the address, or null. */
  private async rowOf(queryId: number, address: Address, addressKey: string): Promise<{ row: Record<string, unknown>; updatedAt: string } | null> {
    const started = await this.call(`/api/v1/query/${queryId}/execute`, { query_parameters: { address } });
    expectOk(NAME, started, 'execute');
    const executionId = isRecord(started.body) && typeof started.body.execution_id === 'string' ? started.body.execution_id : null;
    if (!executionId) throw malformed(NAME, 'execute: expected {execution_id}');
    const deadline = Date.now() + (this.options.maxWaitMs ?? 30_000);
    for (;;) {
      const res = await this.call(`/api/v1/execution/${encodeURIComponent(executionId)}/results?limit=100`);
      expectOk(NAME, res, 'execution results');
      const body = res.body as Record<string, unknown>;
      if (typeof body.state === 'string' && /FAILED|CANCELLED|EXPIRED/.test(body.state)) throw new ProviderError(NAME, 'unavailable', `execution ${executionId} ended ${body.state}`);
      if (body.is_execution_finished === true) {
        const rows = isRecord(body.result) && Array.isArray(body.result.rows) ? body.result.rows : null;
        if (!rows) throw malformed(NAME, 'execution results: expected {result: {rows: [...]}}');
        const row = rows.find((r): r is Record<string, unknown> => isRecord(r) && typeof r[addressKey] === 'string' && (r[addressKey] as string).toLowerCase() === address.toLowerCase());
        if (!row) return null;
        const stamp = [body.execution_ended_at, body.execution_started_at, body.submitted_at].find((v) => typeof v === 'string') as string | undefined;
        return { row, updatedAt: stamp ? new Date(stamp).toISOString() : new Date().toISOString() };
      }
      if (Date.now() > deadline) throw new ProviderError(NAME, 'timeout', `execution ${executionId} did not finish in time`);
      await new Promise((r) => setTimeout(r, this.options.pollMs ?? 1_000));
    }
  }

  async affiliateStats(wallet: Address): Promise<AffiliateStats | null> {
    if (this.options.affiliateStatsQueryId === null) return null;
    const found = await this.rowOf(this.options.affiliateStatsQueryId, wallet, 'affiliate_address');
    if (!found) return null;
    const numbers = Object.fromEntries(AFFILIATE_NUMBERS.map((k) => [k, numberField(found.row, k)])) as Record<(typeof AFFILIATE_NUMBERS)[number], number>;
    return { affiliate_address: wallet.toLowerCase(), referrer_code: textField(found.row, 'referrer_code'), ...numbers, lastUpdatedAt: found.updatedAt };
  }

  async traderStats(trader: Address): Promise<TraderStats | null> {
    if (this.options.traderStatsQueryId === null) return null;
    const found = await this.rowOf(this.options.traderStatsQueryId, trader, 'trader_address');
    if (!found) return null;
    const numbers = Object.fromEntries(TRADER_NUMBERS.map((k) => [k, numberField(found.row, k)])) as Record<(typeof TRADER_NUMBERS)[number], number>;
    return {
      trader_address: trader.toLowerCase(),
      bound_referrer_code: textField(found.row, 'bound_referrer_code'),
      linked_since: isoField(found.row, 'linked_since')!,
      rewards_end: isoField(found.row, 'rewards_end', true),
      ...numbers,
      lastUpdatedAt: found.updatedAt,
    };
  }
}
