/**
 * The live exchange dashboard (issue 13): static files at `/`, its JSON under `/dashboard/api`, "Trade a CoW" on
 * the devnet. Wiring (composition root), once after the order-book and market services exist:
 *   registerDashboard(server, { networks, defaultNetwork, orderBooks, markets, db, now });
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { HttpServer } from '../http/server.js';
import type { ChainNetwork } from '../chain/network.js';
import type { OrderBookBuild } from '../orderbook/build-services.js';
import type { AuctionReads } from '../auction/auction-routes.js';
import type { MarketServices } from '../aux/market/index.js';
import { DashboardStore } from './dashboard-store.js';
import { DashboardReads } from './dashboard-reads.js';
import { registerDashboardRoutes, type DashboardNetwork } from './dashboard-routes.js';
import { registerStaticSite } from './static-site.js';
import { renderServerSummary } from './server-summary.js';
import { CowDemo } from './trade-a-cow.js';

export interface DashboardContext {
  networks: ChainNetwork[];
  defaultNetwork: string | null;
  orderBooks: ReadonlyMap<string, OrderBookBuild & { auctionReads: AuctionReads }>;
  /** chain id → market services */
  markets: ReadonlyMap<number, MarketServices>;
  db: Kysely<DB>;
  /** unix seconds */
  now: () => number;
}

export function registerDashboard(server: HttpServer, ctx: DashboardContext): void {
  const store = new DashboardStore(ctx.db);
  const networks: DashboardNetwork[] = ctx.networks.map((network) => {
    const { services, auctionReads } = ctx.orderBooks.get(network.name)!;
    return {
      name: network.name,
      chainId: network.chainId,
      devnet: network.devnet !== null,
      isDefault: network.name === ctx.defaultNetwork,
      blockTime: network.devnet?.blockTime ?? null,
      reads: new DashboardReads(network, services, auctionReads, ctx.markets.get(network.chainId) ?? null, store),
      cowDemo: network.devnet ? new CowDemo({ network, quotes: services.quotes, orders: services.orders, now: ctx.now }) : null,
    };
  });
  registerDashboardRoutes(server, { networks });
  registerStaticSite(server, {
    renderSummary: async () =>
      renderServerSummary(
        await Promise.all(
          ctx.networks.map(async (network, i) => {
            const auction = await networks[i]!.reads.overview().then((o) => o.auction, () => null);
            return { name: network.name, chainId: network.chainId, devnet: network.devnet?.describe() ?? null, auction };
          }),
        ),
      ),
  });
}
