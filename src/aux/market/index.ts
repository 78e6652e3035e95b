/**
 * Markets of the auxiliary API (spec §4.1 token USD price and top holders, §4.4 slippage, §4.6 yield): routes,
 * per-network services and the first-party data sources behind them; external adapters live in src/providers.
 *
 * Wiring (composition root), per served network:
 *   const services = buildMarketServices(network, database.db, config, { nativePrices: orderBooks.get(network.name)?.nativePrices, logger });
 *   chains.set(network.chainId, { network, ...services });
 * then once: registerMarketRoutes(server, { chains });
 */
export { registerMarketRoutes, YIELD_POOLS_BODY_LIMIT, type MarketChainContext, type MarketRoutesContext } from './routes.js';
export {
  buildMarketServices,
  DEFAULT_MARKET_TTLS,
  type MarketBuildOptions,
  type MarketLogger,
  type MarketProviderSettings,
  type MarketServices,
  type MarketServicesConfig,
  type MarketTtls,
} from './build-services.js';
export { MarketError, type MarketErrorKind } from './market-error.js';
export type { HoldersQuery, MarketSamples, MarketSamplesQuery, MarketSamplesSource, PoolQuery, PoolRecord, PoolSource, PricePoint, TokenHolder, TokenHolderSource, UsdPriceQuery, UsdPriceSource } from '../../providers/ports/market.js';
export { UsdPriceService, NATIVE_PLACEHOLDER } from './prices/usd-price-service.js';
export { TopHoldersService } from './holders/top-holders-service.js';
export { SlippageService, type SlippageParams, type VolatilityDetails } from './slippage/slippage-service.js';
export { YieldService, MAX_POOLS } from './yield/yield-service.js';
