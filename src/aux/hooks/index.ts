/**
 * Hooks analytics (spec §4.7): the indexer of executed hooks (trampoline events → hook_executions), the service
 * that answers GET /hooks from it (and from an optional external analytics source), and the route.
 *
 * Wiring: the HookIndexer runs beside each chain's event indexer (src/loops.ts); the composition root builds
 *   registerHooksRoutes(server, { service: new HooksService({ db, served, external }) }).
 */
export { HookIndexer, type HookIndexerOptions } from './hook-indexer.js';
export { HooksService, HooksQueryError, HOOK_PERIODS, REFERENCE_BLOCKCHAINS, type ExternalHooksSource, type HookRow, type HooksQuery } from './hooks-service.js';
export { registerHooksRoutes, HookRowSchema, MAX_HOOKS_LIMIT } from './routes.js';
