/**
 * All order-book routes of one network, registered under a prefix: `/{network}` and, for the default network,
 * the root. The routes are the same code; only the context (network and its services) differs.
 */
import type { HttpServer } from '../../http/server.js';
import type { OrderBookRouteContext } from './context.js';
import { registerAppDataRoutes } from './app-data-routes.js';
import { registerOrderRoutes } from './order-routes.js';
import { registerQuoteRoutes } from './quote-routes.js';

export function registerOrderBookRoutes(server: HttpServer, ctx: OrderBookRouteContext): void {
  registerAppDataRoutes(server, ctx);
  registerOrderRoutes(server, ctx);
  registerQuoteRoutes(server, ctx);
}

export type { OrderBookRouteContext } from './context.js';
