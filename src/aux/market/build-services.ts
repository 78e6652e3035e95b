/**
 * Builds the market services of one network — USD prices, top holders, slippage, pool yields — from its chain
 * runtime, the database and the configuration. The only place that knows which providers exist: each port is
 * `fallback([cached(first-party), cached(external)...])`, an external adapter being added only when configured.
 *
 * | port         | first-party (always)                   | external (when configured)                          |
 * |--------------|----------------------------------------|-----------------------------------------------------|
 * | USD price    | pools via AmmNativePrice (60 s / 60 s) | Coingecko, order book native_price (120 s / 30 min) |
 * | holders      | indexed balances (15 s / 15 s)         | Moralis, Ethplorer, GoldRush (120 s / 30 min)       |
 * | samples      | indexed Syncs (120 s / 60 s)           | Coingecko market_chart (120 s / 30 min)             |
 * | pools        | indexed pools (60 s / 60 s)            | analytics (Dune query result, 5 min / 1 min)        |
 *
 * (value ttl / "no data" ttl; failures are never cached.)
 *
 * @example
 *   const services = buildMarketServices(network, database.db, config, { nativePrices: orderBook.nativePrices, logger });
 *   registerMarketRoutes(server, { chains: new Map([[network.chainId, { network, ...services }]]) });
 */
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { Config } from '../../config/config.js';
import type { ChainNetwork } from '../../chain/network.js';
import type { DB } from '../../db/schema.js';
import { AmmNativePrice } from '../../orderbook/pricing/amm-native-price.js';
import type { NativePriceSource } from '../../orderbook/pricing/trade-estimator.js';
import { cached } from '../../providers/cached.js';
import { CoingeckoClient, CoingeckoMarketSamples, CoingeckoUsdPrice } from '../../providers/coingecko.js';
import { DunePools, DuneQueryRows } from '../../providers/dune-pools.js';
import { fallback, type FallbackStep } from '../../providers/fallback.js';
import { EthplorerTokenHolders } from '../../providers/holders-ethplorer.js';
import { GoldRushTokenHolders } from '../../providers/holders-goldrush.js';
import { MoralisTokenHolders } from '../../providers/holders-moralis.js';
import { OrderBookUsdPrice } from '../../providers/orderbook-price.js';
import type { FetchLike } from '../../providers/provider-http.js';
import { IndexedTokenHolders } from './holders/indexed-holders.js';
import { TopHoldersService } from './holders/top-holders-service.js';
import type { HoldersQuery, MarketSamplesQuery, PoolQuery, PoolSource, TokenHolderSource, UsdPriceQuery, UsdPriceSource, MarketSamplesSource } from '../../providers/ports/market.js';
import { AmmUsdPrice } from './prices/amm-usd-price.js';
import { UsdPriceService } from './prices/usd-price-service.js';
import { IndexedMarketSamples } from './slippage/indexed-samples.js';
import { SlippageService } from './slippage/slippage-service.js';
import { IndexedPoolStats } from './yield/indexed-pool-stats.js';
import { YieldService } from './yield/yield-service.js';

export interface MarketServices {
  usdPrices: UsdPriceService;
  holders: TopHoldersService;
  slippage: SlippageService;
  yields: YieldService;
}

/** The part of the configuration the market services read (the whole `Config` fits). */
export type MarketServicesConfig = Pick<Config, 'coingeckoApiKey' | 'analyticsApiKey' | 'externalQuoteUrl' | 'outboundTimeoutMs'>;

/** Optional providers that have no configuration variable yet, and test endpoints. */
export interface MarketProviderSettings {
  /** Coingecko endpoint/plan/platform overrides (the key is `COINGECKO_API_KEY`) */
  coingecko?: { baseUrl?: string; plan?: 'pro' | 'demo'; platforms?: Readonly<Record<number, string>> };
  /** base URL of a compatible order book for this network (…/mainnet); default: EXTERNAL_QUOTE_URL when its
   *  last path segment is this network's name */
  orderBookUrl?: string | null;
  moralis?: { apiKey: string; baseUrl?: string; chains?: Readonly<Record<number, string>> };
  ethplorer?: { apiKey: string; hosts?: Readonly<Record<number, string>> };
  goldRush?: { apiKey: string; baseUrl?: string; chains?: Readonly<Record<number, string>> };
  /** the saved analytics query whose rows are pools (the key is `ANALYTICS_API_KEY`) */
  analytics?: { yieldQueryId: number; baseUrl?: string };
  /** per provider call (default min(OUTBOUND_TIMEOUT_MS, 5000)) */
  timeoutMs?: number;
  fetch?: FetchLike;
}

export interface MarketLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface MarketTtls {
  /** first-party USD price, value and "no price"; also the usdPrice Cache-Control max-age */
  usdPriceSeconds: number;
  /** external sources (Coingecko, order book, holder APIs, series): value / "no data" */
  externalMs: number;
  externalNullMs: number;
  /** indexed holders, and the topHolders Cache-Control max-age */
  holdersSeconds: number;
  /** samples (first-party value) and the slippage Cache-Control max-age (spec: 120) */
  slippageSeconds: number;
  /** the computed pool table */
  poolsMs: number;
  /** average APR Cache-Control max-age (spec: 21600) */
  averageAprSeconds: number;
}

export const DEFAULT_MARKET_TTLS: MarketTtls = {
  usdPriceSeconds: 60,
  externalMs: 120_000,
  externalNullMs: 1_800_000,
  holdersSeconds: 60,
  slippageSeconds: 120,
  poolsMs: 60_000,
  averageAprSeconds: 21_600,
};

export interface MarketBuildOptions {
  /** share the order book's native prices (and their cache); default: a new AmmNativePrice */
  nativePrices?: NativePriceSource;
  providers?: MarketProviderSettings;
  logger?: MarketLogger;
  now?: () => number;
  ttl?: Partial<MarketTtls>;
  /** the indexer's checkpoint name (default 'main') */
  indexerName?: string;
  /** called with the source's name when an external provider fails (metrics) */
  onProviderError?: (provider: string) => void;
}

const lower = (a: string) => a.toLowerCase() as Address;

function orderBookUrlFor(network: ChainNetwork, config: MarketServicesConfig, settings: MarketProviderSettings): string | null {
  if (settings.orderBookUrl !== undefined) return settings.orderBookUrl;
  if (!config.externalQuoteUrl) return null;
  try {
    const segments = new URL(config.externalQuoteUrl).pathname.split('/').filter(Boolean);
    return segments[segments.length - 1] === network.name ? config.externalQuoteUrl : null;
  } catch {
    return null;
  }
}

export function buildMarketServices(network: ChainNetwork, db: Kysely<DB>, config: MarketServicesConfig, options: MarketBuildOptions = {}): MarketServices {
  const ttl = { ...DEFAULT_MARKET_TTLS, ...options.ttl };
  const settings = options.providers ?? {};
  const timeoutMs = settings.timeoutMs ?? Math.min(config.outboundTimeoutMs, 5_000);
  const chainId = network.chainId;
  const { reader } = network;
  const log = options.logger;
  const onStep = (port: string) => (step: FallbackStep) => {
    if (step.outcome === 'error') options.onProviderError?.(step.source);
    if (step.outcome === 'error') log?.warn({ chainId, port, source: step.source, err: step.error, ms: Math.round(step.ms) }, `${port}: ${step.source} failed, trying the next source`);
    else if (step.outcome === 'null') log?.debug({ chainId, port, source: step.source }, `${port}: ${step.source} has no data`);
  };
  const decimalsOf = async (token: Address) => (await reader.tokenMetadata(token))?.decimals ?? null;
  const decimalsOfMany = async (tokens: Address[]) => (await reader.tokensMetadata(tokens)).map((m) => m?.decimals ?? null);
  const isToken = async (token: Address) => (await reader.tokenMetadata(token)) !== null;
  const wrappedNative = network.wrappedNative ? lower(network.wrappedNative) : null;
  const stables = network.usdStables.map(lower);
  const references = [...new Set([...(wrappedNative ? [wrappedNative] : []), ...stables])];
  const hubs = [...new Set([...references, ...network.connectors.map(lower)])];
  const priceKey = (q: UsdPriceQuery) => `${q.chainId}:${q.token}`;
  const coingecko = config.coingeckoApiKey
    ? new CoingeckoClient({ apiKey: config.coingeckoApiKey, ...settings.coingecko, timeoutMs, fetch: settings.fetch })
    : null;

  // ---- USD prices
  const nativePrices =
    options.nativePrices ??
    (network.amm && wrappedNative ? new AmmNativePrice({ client: network.client as never, factory: network.amm.factory, wrappedNative, connectors: network.connectors }) : null);
  const priceSources: UsdPriceSource[] = [];
  if (nativePrices) priceSources.push(cached(new AmmUsdPrice({ nativePrices, usdStables: stables, decimals: decimalsOf }), ttl.usdPriceSeconds * 1000, ttl.usdPriceSeconds * 1000, { key: priceKey }));
  if (coingecko) priceSources.push(cached(new CoingeckoUsdPrice(coingecko), ttl.externalMs, ttl.externalNullMs, { key: priceKey }));
  const orderBookUrl = orderBookUrlFor(network, config, settings);
  if (orderBookUrl) {
    const orderBook = new OrderBookUsdPrice({
      baseUrl: orderBookUrl,
      usdStable: stables[0] ?? null,
      tokenDecimals: decimalsOf,
      nativeDecimals: network.nativeCurrency.decimals,
      timeoutMs,
      fetch: settings.fetch,
    });
    priceSources.push(cached(orderBook, ttl.externalMs, ttl.externalNullMs, { key: priceKey }));
  }
  const usdPrices = new UsdPriceService({
    chainId,
    wrappedNative,
    sources: fallback(priceSources, { name: 'usd-price', onStep: onStep('usd-price') }),
    isToken,
    maxAgeSeconds: ttl.usdPriceSeconds,
  });

  // ---- top holders
  const holderKey = (q: HoldersQuery) => `${q.chainId}:${q.token}`;
  const holderSources: TokenHolderSource[] = [cached(new IndexedTokenHolders({ db, indexerName: options.indexerName }), 15_000, 15_000, { key: holderKey })];
  const external = { timeoutMs, fetch: settings.fetch };
  if (settings.moralis) holderSources.push(cached(new MoralisTokenHolders({ ...settings.moralis, ...external }), ttl.externalMs, ttl.externalNullMs, { key: holderKey }));
  if (settings.ethplorer) holderSources.push(cached(new EthplorerTokenHolders({ ...settings.ethplorer, ...external }), ttl.externalMs, ttl.externalNullMs, { key: holderKey }));
  if (settings.goldRush) holderSources.push(cached(new GoldRushTokenHolders({ ...settings.goldRush, ...external }), ttl.externalMs, ttl.externalNullMs, { key: holderKey }));
  const holders = new TopHoldersService({
    chainId,
    sources: fallback(holderSources, { name: 'holders', onStep: onStep('holders') }),
    trackedTokens: network.trackedTokens.map(lower),
    isToken,
    maxAgeSeconds: ttl.holdersSeconds,
  });

  // ---- slippage
  const samplesKey = (q: MarketSamplesQuery) => `${q.chainId}:${q.base}:${q.quote}:${q.toMs - q.fromMs}`;
  const sampleSources: MarketSamplesSource[] = [
    cached(new IndexedMarketSamples({ db, numeraires: references, hubs, decimals: decimalsOfMany }), ttl.slippageSeconds * 1000, 60_000, { key: samplesKey, maxEntries: 2_000 }),
  ];
  if (coingecko) sampleSources.push(cached(new CoingeckoMarketSamples(coingecko), ttl.externalMs, ttl.externalNullMs, { key: samplesKey, maxEntries: 2_000 }));
  const slippage = new SlippageService({
    chainId,
    db,
    wrappedNative,
    hubs,
    samples: fallback(sampleSources, { name: 'samples', onStep: onStep('samples') }),
    usdPrice: (token) => usdPrices.usdPriceOrNull(token),
    now: options.now,
    maxAgeSeconds: ttl.slippageSeconds,
  });

  // ---- yield
  const poolKey = (q: PoolQuery) => `${q.chainId}:${q.limit}:${q.addresses ? q.addresses.join(',') : '*'}`;
  const poolSources: PoolSource[] = [
    cached(
      new IndexedPoolStats({
        db,
        project: network.amm?.name ?? 'uniswap-v2',
        referenceTokens: references,
        usdPrice: (token) => usdPrices.usdPriceOrNull(token),
        decimals: decimalsOfMany,
        now: options.now,
      }),
      ttl.poolsMs,
      ttl.poolsMs,
      { key: poolKey, maxEntries: 64 },
    ),
  ];
  if (config.analyticsApiKey && settings.analytics) {
    const rows = cached(new DuneQueryRows({ apiKey: config.analyticsApiKey, queryId: settings.analytics.yieldQueryId, baseUrl: settings.analytics.baseUrl, timeoutMs: Math.max(timeoutMs, 10_000), fetch: settings.fetch }), 300_000, 60_000, { key: () => 'rows' });
    poolSources.push(new DunePools({ rows, onSkipped: (count) => log?.warn({ chainId, count }, 'analytics: malformed pool rows skipped') }));
  }
  const yields = new YieldService({
    chainId,
    sources: poolSources,
    onSourceError: (source, err) => log?.warn({ chainId, source, err }, 'yield: pool source failed'),
    averageAprMaxAgeSeconds: ttl.averageAprSeconds,
  });

  return { usdPrices, holders, slippage, yields };
}
