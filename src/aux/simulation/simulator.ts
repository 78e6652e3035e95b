/**
 * The simulator the routes use: a provider chain (Tenderly first when SIMULATION_API_KEY,
 * SIMULATION_PROJECT_NAME and SIMULATION_ORG_NAME are all set, then the first-party anvil-fork simulator) behind
 * a concurrency gate (at most `maxConcurrent` runs, at most `maxQueued` waiting), a deadline per run (queueing
 * included) and a stop switch that aborts every run and kills its fork.
 *
 * A provider's failure never aborts the chain: any error of Tenderly (unreachable, 5xx, refused credentials,
 * refused bundle) is logged and the bundle runs on the fork instead. Only the last provider's error reaches the
 * caller.
 *
 * @example
 *   const simulator = createSimulator({ tenderly: config.simulation, timeoutMs: 30_000, logger });
 *   const outcome = await simulator.simulate({ chainId, rpcUrl, wrappedNative, transactions });
 *   await simulator.stop();
 */
import { ForkSimulator, type ForkSimulatorOptions } from './fork-simulator.js';
import { TenderlySimulator, type TenderlyOptions } from './tenderly-simulator.js';
import { SimulationUnavailableError, type BundleOutcome, type BundleRequest, type Simulator } from './types.js';

export interface SimulationLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SimulatorOptions {
  /** Tenderly credentials (config.simulation); the adapter is used only when all three are set */
  tenderly?: { apiKey: string | null; projectName: string | null; orgName: string | null } | null;
  /** Tenderly API and dashboard bases (tests point these at a local server) */
  tenderlyBaseUrl?: string;
  tenderlyDashboardUrl?: string;
  /** simultaneous runs (default 4: each first-party run is one anvil process) */
  maxConcurrent?: number;
  /** runs waiting for a slot before new ones are refused with 502 (default 32) */
  maxQueued?: number;
  /** deadline of one run, waiting included (default 30 s) */
  timeoutMs?: number;
  /** timeout of each outbound call: Tenderly, the chain's RPC, the fork (default 10 s) */
  outboundTimeoutMs?: number;
  fork?: Omit<ForkSimulatorOptions, 'rpcTimeoutMs'>;
  /** replaces the provider chain (tests) */
  providers?: Simulator[];
  logger?: SimulationLogger;
}

export interface BundleSimulator {
  /** provider names in the order they are tried */
  readonly providers: readonly string[];
  simulate(request: BundleRequest): Promise<BundleOutcome>;
  /** runs in progress and waiting */
  load(): { running: number; queued: number };
  /** Aborts every run (their forks are killed) and refuses new ones; resolves when all have settled. */
  stop(): Promise<void>;
}

const silent: SimulationLogger = { info: () => {}, warn: () => {} };

/** Tries each simulator in turn; returns the first result. The caller's abort is never "fallen back" from. */
export function fallbackSimulator(simulators: readonly Simulator[], logger: SimulationLogger = silent): Simulator {
  if (simulators.length === 0) throw new Error('fallbackSimulator needs at least one simulator');
  return {
    name: simulators.map((s) => s.name).join('>'),
    async simulate(request, signal) {
      for (let i = 0; ; i++) {
        const simulator = simulators[i]!;
        try {
          return await simulator.simulate(request, signal);
        } catch (err) {
          if (signal.aborted || i === simulators.length - 1) throw err;
          logger.warn({ err, provider: simulator.name, next: simulators[i + 1]!.name, chainId: request.chainId }, `simulation: ${simulator.name} failed, falling back`);
        }
      }
    },
  };
}

export function createSimulator(options: SimulatorOptions = {}): BundleSimulator {
  const logger = options.logger ?? silent;
  const outboundTimeoutMs = options.outboundTimeoutMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxConcurrent = Math.max(1, options.maxConcurrent ?? 4);
  const maxQueued = Math.max(0, options.maxQueued ?? 32);

  let providers = options.providers ? [...options.providers] : null;
  if (!providers) {
    providers = [];
    const t = options.tenderly;
    if (t?.apiKey && t.projectName && t.orgName) {
      const tenderly: TenderlyOptions = { apiKey: t.apiKey, projectName: t.projectName, orgName: t.orgName, timeoutMs: outboundTimeoutMs };
      if (options.tenderlyBaseUrl) tenderly.baseUrl = options.tenderlyBaseUrl;
      if (options.tenderlyDashboardUrl) tenderly.dashboardUrl = options.tenderlyDashboardUrl;
      providers.push(new TenderlySimulator(tenderly));
    }
    providers.push(new ForkSimulator({ ...options.fork, rpcTimeoutMs: outboundTimeoutMs }));
  }
  const chainProviders = providers;
  const chain = fallbackSimulator(providers, logger);

  const stopping = new AbortController();
  let running = 0;
  const waiting: Array<{ grant: () => void }> = [];
  const inFlight = new Set<Promise<unknown>>();

  function acquire(signal: AbortSignal): Promise<void> {
    if (running < maxConcurrent) {
      running++;
      return Promise.resolve();
    }
    if (waiting.length >= maxQueued) {
      return Promise.reject(new SimulationUnavailableError(`the simulator is busy (${running} running, ${waiting.length} waiting); retry later`));
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = waiting.indexOf(entry);
        if (at >= 0) waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(entry);
    });
  }

  function release(): void {
    const next = waiting.shift();
    if (next) next.grant(); // the slot passes straight on
    else running--;
  }

  async function run(request: BundleRequest): Promise<BundleOutcome> {
    if (stopping.signal.aborted) throw new SimulationUnavailableError('the simulator is shutting down');
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([stopping.signal, deadline]);
    const started = performance.now();
    try {
      await acquire(signal);
      try {
        const outcome = await chain.simulate(request, signal);
        logger.info(
          { chainId: request.chainId, provider: outcome.provider, transactions: request.transactions.length, ms: Math.round(performance.now() - started) },
          'simulation: bundle simulated',
        );
        return outcome;
      } finally {
        release();
      }
    } catch (err) {
      if (stopping.signal.aborted) throw new SimulationUnavailableError('the simulator is shutting down', { cause: err });
      if (deadline.aborted) throw new SimulationUnavailableError(`the simulation did not finish within ${timeoutMs} ms`, { cause: err });
      throw err;
    }
  }

  return {
    providers: providers.map((p) => p.name),
    simulate(request) {
      const p = run(request);
      inFlight.add(p);
      const forget = () => inFlight.delete(p);
      p.then(forget, forget);
      return p;
    },
    load: () => ({ running, queued: waiting.length }),
    async stop() {
      stopping.abort(new SimulationUnavailableError('the simulator is shutting down'));
      await Promise.allSettled([...inFlight]);
      await Promise.allSettled(chainProviders.map((p) => p.close?.()));
    },
  };
}
