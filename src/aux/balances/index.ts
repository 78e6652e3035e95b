/**
 * Account balances and allowances (spec §4.3, §6): the REST and SSE routes and the per-chain BalanceStream that
 * serves every stream of a chain from one block subscription, optionally shared across replicas through Redis.
 *
 * Wiring (composition root), per served chain:
 *   const stream = new BalanceStream({ chainId, reader, vaultRelayer, replicas: shared.kind === 'redis' ? { coordination: shared.coordination, pubsub: shared.pubsub } : null, logger, signal });
 *   registerBalanceRoutes(server, { chains: [{ chainId, reader, vaultRelayer, nativeCurrency, stream }], caps, signal });
 */
export { registerBalanceRoutes, type BalanceChainContext, type BalanceRoutes, type BalanceRoutesContext } from './routes.js';
export {
  BalanceStream,
  StreamClosedError,
  type BalanceStreamOptions,
  type BalanceStreamStats,
  type BalanceWatch,
  type ChainReadEvent,
  type PairReader,
  type WatchRequest,
} from './balance-stream.js';
export type { ReplicaOptions } from './replica-sync.js';
export { DEFAULT_CONNECTION_CAPS, type ConnectionCaps } from './connection-limiter.js';
export { NATIVE_TOKEN, type BalanceEntry, type NativeCurrency, type TokenInfo } from './balance-entry.js';
export { MAX_TOKENS_PER_REQUEST } from './token-list.js';
