/**
 * Tenderly adapter (reference auxiliary.md §3.6, §4): POST
 * `{base}/api/v1/account/{org}/project/{project}/simulate-bundle` with header `X-Access-Key` and body
 * `{simulations: [{network_id, from, to, input, value, gas?, gas_price, save, save_if_fails, simulation_type}]}`.
 * Unlike upstream, the caller's `gas_price` is passed on (0 when absent) instead of being forced to 0.
 *
 * Response mapping, per element of `simulation_results` (same order as the request):
 * - `transaction.status` (or `simulation.status`) → success / reverted; `gas_used` → gas;
 * - `transaction.transaction_info.asset_changes[]` → balance changes: `raw_amount` leaves `from` and reaches
 *   `to` (a mint has no `from`, a burn no `to`), keyed by `token_info.contract_address`, or the 0xeeee… key for
 *   the native currency; non-fungible changes are skipped. Tenderly reports value transfers here, not gas;
 * - `transaction.transaction_info.state_diff[].raw[]` (`address, key, original, dirty`) → storage changes;
 * - the revert reason from `call_trace.error_reason` (or the return data, or `error_message`);
 * - `simulation.id` → the public dashboard link.
 * Tenderly stops at the first failure; missing results are reported as not executed.
 *
 * Errors: unreachable, timeout, 429 or 5xx → SimulationUnavailableError; 401/403/404 (bad key, org or project)
 * → SimulationFailedError (credentials misconfigured); another 4xx → SimulationUnavailableError carrying
 * Tenderly's message (the provider refused the bundle). Behind `fallbackSimulator`, all of these move on to
 * the first-party simulator.
 */
import type { Address, Hex } from 'viem';
import { describeRevert } from './revert-reason.js';
import { addAmount, word } from './state-changes.js';
import { notExecuted } from './fork-simulator.js';
import {
  NATIVE_ASSET,
  SimulationFailedError,
  SimulationUnavailableError,
  type BalanceChanges,
  type BundleOutcome,
  type BundleRequest,
  type Simulator,
  type StorageChange,
  type TransactionOutcome,
} from './types.js';

export interface TenderlyOptions {
  apiKey: string;
  projectName: string;
  orgName: string;
  /** API base (default https://api.tenderly.co) */
  baseUrl?: string;
  /** dashboard base for public links (default https://dashboard.tenderly.co) */
  dashboardUrl?: string;
  timeoutMs?: number;
}

interface TenderlyAssetChange {
  token_info?: { standard?: string; type?: string; contract_address?: string | null } | null;
  type?: string;
  from?: string | null;
  to?: string | null;
  raw_amount?: string | number | null;
}

interface TenderlyStateDiff {
  address?: string;
  raw?: Array<{ address?: string; key?: string; original?: string; dirty?: string }> | null;
}

interface TenderlyResult {
  transaction?: {
    status?: boolean;
    gas_used?: number | string;
    block_number?: number | string;
    error_message?: string | null;
    transaction_info?: {
      asset_changes?: TenderlyAssetChange[] | null;
      state_diff?: TenderlyStateDiff[] | null;
      call_trace?: { error_reason?: string | null; error?: string | null; output?: string | null } | null;
    } | null;
  } | null;
  simulation?: { id?: string; status?: boolean; gas_used?: number | string; block_number?: number | string; error_message?: string | null } | null;
}

export class TenderlySimulator implements Simulator {
  readonly name = 'tenderly';
  private readonly baseUrl: string;
  private readonly dashboardUrl: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: TenderlyOptions) {
    this.baseUrl = (options.baseUrl ?? 'https://api.tenderly.co').replace(/\/+$/, '');
    this.dashboardUrl = (options.dashboardUrl ?? 'https://dashboard.tenderly.co').replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async simulate(request: BundleRequest, signal: AbortSignal): Promise<BundleOutcome> {
    const { orgName, projectName } = this.options;
    const url = `${this.baseUrl}/api/v1/account/${encodeURIComponent(orgName)}/project/${encodeURIComponent(projectName)}/simulate-bundle`;
    const body = {
      simulations: request.transactions.map((tx) => ({
        network_id: String(request.chainId),
        from: tx.from,
        to: tx.to,
        input: tx.input,
        value: tx.value.toString(10),
        ...(tx.gas !== null ? { gas: tx.gas } : {}),
        gas_price: (tx.gasPrice ?? 0n).toString(10),
        save: true,
        save_if_fails: true,
        simulation_type: 'full',
      })),
    };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'X-Access-Key': this.options.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, timeout]),
      });
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
      throw new SimulationUnavailableError(`Tenderly is unreachable: ${why}`, { cause: err });
    }
    if (!res.ok) {
      const detail = errorMessage(text);
      if (res.status === 401 || res.status === 403 || res.status === 404) {
        throw new SimulationFailedError(
          `Tenderly refused the request (HTTP ${res.status}${detail ? `: ${detail}` : ''}); check SIMULATION_API_KEY, SIMULATION_ORG_NAME and SIMULATION_PROJECT_NAME`,
        );
      }
      throw new SimulationUnavailableError(`Tenderly answered HTTP ${res.status}${detail ? `: ${detail}` : ''}`);
    }
    let parsed: { simulation_results?: TenderlyResult[] };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new SimulationUnavailableError('Tenderly answered with malformed JSON');
    }
    if (!parsed || !Array.isArray(parsed.simulation_results)) throw new SimulationUnavailableError('Tenderly answered without simulation_results');

    const outcomes: TransactionOutcome[] = [];
    let failed = false;
    let blockNumber: number | null = null;
    for (let index = 0; index < request.transactions.length; index++) {
      const result = parsed.simulation_results[index];
      if (failed || !result) {
        outcomes.push(notExecuted(index));
        failed = true;
        continue;
      }
      blockNumber ??= toNumber(result.simulation?.block_number ?? result.transaction?.block_number);
      const outcome = this.mapResult(index, result);
      outcomes.push(outcome);
      if (outcome.outcome !== 'success') failed = true;
    }
    return { provider: this.name, blockNumber, transactions: outcomes };
  }

  private mapResult(index: number, result: TenderlyResult): TransactionOutcome {
    const tx = result.transaction ?? {};
    const sim = result.simulation ?? {};
    const info = tx.transaction_info ?? {};
    const ok = typeof tx.status === 'boolean' ? tx.status : sim.status === true;
    const gasUsed = toBigInt(tx.gas_used ?? sim.gas_used) ?? 0n;
    const providerLink = sim.id
      ? `${this.dashboardUrl}/public/${encodeURIComponent(this.options.orgName)}/${encodeURIComponent(this.options.projectName)}/simulator/${encodeURIComponent(sim.id)}`
      : null;
    if (!ok) {
      const output = info.call_trace?.output;
      const data = typeof output === 'string' && /^0x[0-9a-fA-F]+$/.test(output) ? (output.toLowerCase() as Hex) : null;
      const reason = info.call_trace?.error_reason || (data ? describeRevert(data) : null) || tx.error_message || sim.error_message || info.call_trace?.error || 'execution reverted';
      return { index, outcome: 'reverted', gasUsed, revertReason: reason, revertData: data, balanceChanges: new Map(), storageChanges: [], providerLink };
    }
    return {
      index,
      outcome: 'success',
      gasUsed,
      revertReason: null,
      revertData: null,
      balanceChanges: assetChanges(info.asset_changes ?? []),
      storageChanges: storageChanges(info.state_diff ?? []),
      providerLink,
    };
  }
}

function assetChanges(list: readonly TenderlyAssetChange[]): BalanceChanges {
  const out: BalanceChanges = new Map();
  for (const change of list) {
    const info = change.token_info ?? {};
    const native = info.standard === 'NativeCurrency' || info.type === 'Native';
    const fungible = native || info.standard === 'ERC20' || info.type === 'Fungible';
    if (!fungible) continue;
    const token = native ? NATIVE_ASSET : isAddress(info.contract_address) ? (info.contract_address.toLowerCase() as Address) : null;
    const amount = toBigInt(change.raw_amount);
    if (token === null || amount === null || amount === 0n) continue;
    if (isAddress(change.from) && !/^0x0{40}$/.test(change.from)) addAmount(out, change.from as Address, token, -amount);
    if (isAddress(change.to) && !/^0x0{40}$/.test(change.to)) addAmount(out, change.to as Address, token, amount);
  }
  return out;
}

function storageChanges(list: readonly TenderlyStateDiff[]): StorageChange[] {
  const out: StorageChange[] = [];
  for (const diff of list) {
    for (const raw of diff.raw ?? []) {
      const address = raw.address ?? diff.address;
      if (!isAddress(address) || typeof raw.key !== 'string') continue;
      try {
        const original = word(raw.original ?? '0x0');
        const updated = word(raw.dirty ?? '0x0');
        if (original !== updated) out.push({ address: address.toLowerCase() as Address, key: word(raw.key), original, updated });
      } catch {
        // a value that is not a hex word: skip it rather than fail the run
      }
    }
  }
  return out;
}

function isAddress(value: unknown): value is string {
  return typeof value === 'string' && /^0x[0-9a-fA-F]{40}$/.test(value);
}

function toBigInt(value: unknown): bigint | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return BigInt(value);
  return null;
}

function toNumber(value: unknown): number | null {
  const big = toBigInt(value);
  return big === null ? null : Number(big);
}

function errorMessage(text: string): string | null {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const m = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    return typeof m === 'string' ? m.slice(0, 300) : null;
  } catch {
    return text ? text.slice(0, 200) : null;
  }
}
