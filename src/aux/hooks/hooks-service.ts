/**
 * Hooks analytics (spec §4.7, reference auxiliary.md §3.8): the hooks executed in settlements over a period,
 * one row per executed hook with the reference row's fields. Networks we serve answer from our own index
 * (`hook_executions`, filled by the HookIndexer from the trampoline's events); the reference's other networks
 * answer from the optional external analytics source when one is configured, else with no rows.
 *
 * @example
 *   const service = new HooksService({ db, served: new Map([['devnet', 31337]]), external: null });
 *   await service.list({ blockchain: 'devnet', period: 'last 1d', limit: 100, offset: 0, maxWaitTimeMs: 300_000 });
 */
import type { Kysely } from 'kysely';
import { toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { ExternalHooksSource, HookRow, HooksQuery } from '../../providers/ports/hooks.js';

export type { ExternalHooksSource, HookRow, HooksQuery } from '../../providers/ports/hooks.js';

/** The reference's periods and their length in seconds (months as 30 days). */
export const HOOK_PERIODS: Readonly<Record<string, number>> = {
  'last 3h': 3 * 3600,
  'last 1d': 86_400,
  'last 7d': 7 * 86_400,
  'last 30d': 30 * 86_400,
  'last 3m': 90 * 86_400,
  'last 6m': 180 * 86_400,
  'last 12m': 365 * 86_400,
};

/** The reference's blockchain names and their chain ids. */
export const REFERENCE_BLOCKCHAINS: Readonly<Record<string, number>> = { mainnet: 1, arbitrum: 42161, avalanche: 43114, base: 8453, gnosis: 100, polygon: 137 };

/** A query the service cannot answer: unknown blockchain or period (400). */
export class HooksQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HooksQueryError';
  }
}

/** Our rows are the one order book this node runs: its production environment. */
export const FIRST_PARTY_ENVIRONMENT = 'prod';

export interface HooksServiceOptions {
  db: Kysely<DB>;
  /** served network name → chain id (e.g. devnet → 31337) */
  served: ReadonlyMap<string, number>;
  external: ExternalHooksSource | null;
  /** unix seconds */
  now?: () => number;
}

export class HooksService {
  constructor(private readonly options: HooksServiceOptions) {}

  /** Every blockchain name the route accepts: the reference's and the served networks'. */
  blockchains(): string[] {
    return [...new Set([...Object.keys(REFERENCE_BLOCKCHAINS), ...this.options.served.keys()])];
  }

  async list(query: HooksQuery): Promise<HookRow[]> {
    const seconds = HOOK_PERIODS[query.period];
    if (seconds === undefined) throw new HooksQueryError(`unknown period '${query.period}'; expected one of: ${Object.keys(HOOK_PERIODS).join(', ')}`);
    const chainId = this.options.served.get(query.blockchain) ?? servedByReference(query.blockchain, this.options.served);
    if (chainId !== null) return this.firstParty(chainId, seconds, query);
    if (REFERENCE_BLOCKCHAINS[query.blockchain] === undefined) {
      throw new HooksQueryError(`unknown blockchain '${query.blockchain}'; expected one of: ${this.blockchains().join(', ')}`);
    }
    return this.options.external ? this.options.external.hooks(query) : [];
  }

  private async firstParty(chainId: number, seconds: number, query: HooksQuery): Promise<HookRow[]> {
    const now = this.options.now?.() ?? Math.floor(Date.now() / 1000);
    const since = new Date((now - seconds) * 1000);
    const rows = await this.options.db
      .selectFrom('hook_executions')
      .selectAll()
      .where('chain_id', '=', chainId)
      .where('block_time', '>=', since)
      .orderBy('block_time', 'desc')
      .orderBy('block_number', 'desc')
      .orderBy('log_index', 'desc')
      .limit(query.limit)
      .offset(query.offset)
      .execute();
    return rows.map((r) => ({
      environment: FIRST_PARTY_ENVIRONMENT,
      block_time: new Date(r.block_time).toISOString(),
      is_bridging: r.is_bridging,
      success: r.success,
      app_code: r.app_code,
      destination_chain_id: r.destination_chain_id,
      destination_token_address: r.destination_token_address,
      hook_type: r.hook_type,
      app_id: r.app_id,
      target: toHex(r.target),
      gas_limit: Number(r.gas_limit),
      app_hash: r.app_hash ? toHex(r.app_hash) : null,
      tx_hash: toHex(r.tx_hash),
    }));
  }
}

/** A reference name (e.g. `gnosis`) of a chain we serve under another name (e.g. `xdai`): its chain id. */
function servedByReference(blockchain: string, served: ReadonlyMap<string, number>): number | null {
  const chainId = REFERENCE_BLOCKCHAINS[blockchain];
  if (chainId === undefined) return null;
  return [...served.values()].includes(chainId) ? chainId : null;
}
