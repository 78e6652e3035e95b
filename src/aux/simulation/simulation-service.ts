/**
 * Runs a bundle on a served chain, turns the outcome into the wire result and stores the run under a fresh id
 * (the result's `link` points at it). Runs older than the retention period are pruned, at most once an hour; each
 * client keeps at most `maxRunsPerClient` runs (its oldest are deleted when it stores a new one).
 *
 * @example
 *   const service = new SimulationService({ chains, simulator, store });
 *   const result = await service.simulate(31337, transactions, (id) => `${base}/31337/simulation/${id}`, '10.0.0.7');
 */
import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import { storedRequest, type SimulationResultJson, type StoredRunJson } from './schemas.js';
import type { SimulationStore } from './simulation-store.js';
import type { BundleSimulator, SimulationLogger } from './simulator.js';
import { summarizeBundle } from './summarize-bundle.js';
import { SimulationFailedError, type BundleTransaction } from './types.js';

export interface SimulationChain {
  /** a fork-capable JSON-RPC node of the chain (the devnet's, or RPC_URL_<id>) */
  rpcUrl: string;
  /** its wrapped native token (WETH, WXDAI): Deposit/Withdrawal count as balance changes */
  wrappedNative?: Address | null;
}

export interface SimulationServiceDeps {
  chains: ReadonlyMap<number, SimulationChain>;
  simulator: BundleSimulator;
  store: SimulationStore;
  /** keep stored runs this long (default 30 days; 0 = forever) */
  retentionMs?: number;
  /** keep at most this many stored runs per client, the newest (default DEFAULT_MAX_RUNS_PER_CLIENT) */
  maxRunsPerClient?: number;
  logger?: SimulationLogger;
}

const HOUR = 3_600_000;

/** SIMULATION_MAX_STORED_RUNS_PER_CLIENT's default */
export const DEFAULT_MAX_RUNS_PER_CLIENT = 100;

export class SimulationService {
  private lastPrune = 0;

  constructor(private readonly deps: SimulationServiceDeps) {}

  supports(chainId: number): boolean {
    return this.deps.chains.has(chainId);
  }

  /**
   * The chain must be supported (check `supports` first). Rejects with the simulator's errors. `client` (the
   * caller's clientKey) owns the stored run; null stores it unowned (pruned by age only).
   */
  async simulate(chainId: number, transactions: BundleTransaction[], linkFor: (id: string) => string, client: string | null = null): Promise<SimulationResultJson> {
    const chain = this.deps.chains.get(chainId);
    if (!chain) throw new Error(`chain ${chainId} is not served`);
    const outcome = await this.deps.simulator.simulate({
      chainId,
      rpcUrl: chain.rpcUrl,
      wrappedNative: chain.wrappedNative ? (chain.wrappedNative.toLowerCase() as Address) : null,
      transactions,
    });
    const id = randomUUID();
    const result = summarizeBundle(outcome, { id, chainId, link: linkFor(id) });
    try {
      await this.deps.store.save({ id, chainId, provider: outcome.provider, blockNumber: outcome.blockNumber, status: result.status, request: storedRequest(transactions), result, client });
    } catch (err) {
      throw new SimulationFailedError(`the simulation ran but could not be stored: ${(err as Error).message}`, { cause: err });
    }
    if (client !== null) await this.capClient(client);
    this.maybePrune();
    return result;
  }

  get(chainId: number, id: string): Promise<StoredRunJson | null> {
    return this.deps.store.get(chainId, id);
  }

  /** Deletes the client's runs beyond its newest `maxRunsPerClient`; a failure is logged, the run stays answered. */
  private async capClient(client: string): Promise<void> {
    const keep = this.deps.maxRunsPerClient ?? DEFAULT_MAX_RUNS_PER_CLIENT;
    try {
      const deleted = await this.deps.store.capClient(client, keep);
      if (deleted > 0) this.deps.logger?.info({ deleted, keep }, 'simulation: pruned the oldest runs of a client');
    } catch (err) {
      this.deps.logger?.warn({ err }, 'simulation: capping the stored runs of a client failed');
    }
  }

  private maybePrune(): void {
    const retention = this.deps.retentionMs ?? 30 * 24 * HOUR;
    if (retention <= 0 || Date.now() - this.lastPrune < HOUR) return;
    this.lastPrune = Date.now();
    this.deps.store.prune(new Date(Date.now() - retention)).then(
      (n) => n > 0 && this.deps.logger?.info({ deleted: n }, 'simulation: pruned old runs'),
      (err) => this.deps.logger?.warn({ err }, 'simulation: pruning old runs failed'),
    );
  }
}
