/**
 * The Solver Engine API (issue 12): the one boundary between auctions and every solver engine. The pieces:
 * `schemas.ts` + `codec.ts` (the wire format), `auction-encoder.ts` (our auction → `Auction`),
 * `solution-check.ts` (`Solution` → ours, checked), `engine-client.ts` (engines as competition `Solver`s,
 * notify), `engines.ts` (our built-in engines behind the API), `routes.ts` (them over HTTP).
 *
 * @example
 *   const engines = buildSolverEngines(network, { engines: [{ name: 'mine', url: 'http://127.0.0.1:9000' }], timeLimitMs: 2000 });
 *   startAuctionLoop({ ..., solvers: engines.solvers });
 *   registerSolverEngineRoutes(server, { engines: engines.services, prefix: '/devnet' });
 */
import type { Address } from 'viem';
import type { ChainNetwork } from '../chain/network.js';
import { AuctionEncoder } from './auction-encoder.js';
import { EngineSolver, httpTransport, localTransport, type EngineLogger } from './engine-client.js';
import { builtInEngine, BUILT_IN_ENGINES, EngineService, type BuiltInEngineName } from './engines.js';
import { ThreadedEngine } from './engine-threads.js';

export { registerSolverEngineRoutes } from './routes.js';
export { notifyEngines, EngineSolver, originOf } from './engine-client.js';
export { BUILT_IN_ENGINES } from './engines.js';

/** One competing engine: built-in by name (url null) or external at `url`. */
export interface EngineEntry {
  name: string;
  url: string | null;
}

export interface SolverEnginesConfig {
  /** the competing engines; empty: both built-ins */
  engines: EngineEntry[];
  timeLimitMs: number;
}

export interface SolverEngines {
  /** the competition's solvers, in the configured order */
  solvers: EngineSolver[];
  /** the built-in engines served over HTTP on this network, by name */
  services: Map<string, EngineService>;
  /** ends the built-in engines' worker threads */
  close(): Promise<void>;
}

export function buildSolverEngines(network: ChainNetwork, config: SolverEnginesConfig, options: { logger?: EngineLogger; now?: () => number } = {}): SolverEngines {
  // the built-ins solve on worker threads (engine-threads.ts): never on the event loop
  const threadNetwork = { chainId: network.chainId, settlement: network.settlement, amm: network.amm, connectors: network.connectors, wrappedNative: network.wrappedNative };
  const services = new Map<string, EngineService>(BUILT_IN_ENGINES.map((name) => [name, new EngineService(new ThreadedEngine(name, threadNetwork))]));
  const driverServices: EngineService[] = [];
  const driverService = (name: BuiltInEngineName) => {
    // until its thread has loaded, the driver's engine solves in process (as before threads), not never
    const engine = new ThreadedEngine(name, threadNetwork, { fallback: builtInEngine(name, { ...threadNetwork, client: network.client }) });
    engine.warm(); // the driver's auctions come every block: its thread loads now, not during the first one
    const service = new EngineService(engine, 1_000);
    driverServices.push(service);
    return service;
  };
  const encoder = new AuctionEncoder(network, config.timeLimitMs, options.now);
  const forbiddenTargets = [network.settlement, network.vaultRelayer].map((a) => a.toLowerCase() as Address);
  const entries = config.engines.length > 0 ? config.engines : BUILT_IN_ENGINES.map((name) => ({ name, url: null }));
  const solvers = entries.map(
    (e) =>
      new EngineSolver({
        name: e.name,
        // the driver's own built-ins get their own instances (HTTP callers never make the driver's auctions wait)
        transport: e.url ? httpTransport(e.url) : localTransport(driverService(e.name as BuiltInEngineName)),
        encoder,
        settlement: network.settlement,
        forbiddenTargets,
        logger: options.logger,
        now: options.now,
      }),
  );
  return { solvers, services, close: async () => void (await Promise.all([...services.values(), ...driverServices].map((s) => s.close()))) };
}
