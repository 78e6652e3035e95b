/**
 * Bundle simulation for the auxiliary API (spec §4.5): `createSimulator` builds the provider chain (Tenderly when
 * configured, then the first-party anvil-fork simulator) with its concurrency gate, deadline and `stop()`;
 * `registerSimulationRoutes` serves POST /{chainId}/simulation/simulateBundle and GET /{chainId}/simulation/{id}.
 *
 * @example
 *   const simulator = createSimulator({ tenderly: config.simulation, outboundTimeoutMs: config.outboundTimeoutMs, logger });
 *   registerSimulationRoutes(server, { chains: new Map([[31337, { rpcUrl, wrappedNative }]]), simulator, db });
 *   // on shutdown
 *   await simulator.stop();
 */
export { createSimulator, fallbackSimulator, type BundleSimulator, type SimulatorOptions, type SimulationLogger } from './simulator.js';
export { registerSimulationRoutes, type SimulationRouteContext } from './routes.js';
export { SimulationService, type SimulationChain } from './simulation-service.js';
export { ForkSimulator, type ForkSimulatorOptions } from './fork-simulator.js';
export { TenderlySimulator, type TenderlyOptions } from './tenderly-simulator.js';
export { MAX_BUNDLE_TRANSACTIONS, type SimulationResultJson, type StoredRunJson } from './schemas.js';
export {
  NATIVE_ASSET,
  SimulationFailedError,
  SimulationUnavailableError,
  type BundleOutcome,
  type BundleRequest,
  type BundleTransaction,
  type Simulator,
  type TransactionOutcome,
} from './types.js';
