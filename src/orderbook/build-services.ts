/** Builds the order-book services of one network from its chain runtime, the database and the configuration. */
import { quoteVolumeFactor, type RecoverAddress } from '../protocol/index.js';
import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { Config } from '../config/config.js';
import type { DB } from '../db/schema.js';
import type { ChainNetwork } from '../chain/network.js';
import { AppDataService } from './app-data.js';
import { OrderRepository } from './orders/order-repository.js';
import { PlacedOrdersRepository } from './orders/placed-orders.js';
import { OrderService } from './orders/order-service.js';
import { CancellationService } from './orders/cancellation-service.js';
import { DEFAULT_ORDER_POLICY } from './orders/order-ports.js';
import { TradeService } from './trades/trade-service.js';
import { TradeFeeReader } from './trades/trade-fees.js';
import { QuoteService } from './quotes/quote-service.js';
import { UniswapV2Estimator } from './pricing/uniswap-v2-estimator.js';
import { AmmNativePrice } from './pricing/amm-native-price.js';
import { PoolReserves } from './pricing/pool-reserves.js';
import { perBlock } from '../chain/per-block.js';
import type { NativePriceSource, TradeEstimator } from './pricing/trade-estimator.js';
import { BestOfEstimators, ExternalOrderBookEstimator } from './pricing/external-orderbook-estimator.js';
import { OrderBookError } from '../protocol/order-book-error.js';
import type { CompetitionStatusOf, OrderBookNetworkServices } from './routes/context.js';
import { preHookAllowance } from '../chain/pre-hook-allowance.js';

class NoEstimator implements TradeEstimator {
  readonly name = 'none';
  async estimate(): Promise<never> {
    throw new OrderBookError('NoLiquidity', 'no price estimator is configured for this network');
  }
}

export interface OrderBookBuild {
  services: OrderBookNetworkServices;
  estimator: TradeEstimator;
  nativePrices: NativePriceSource;
  orders: OrderRepository;
  /** calls `listener` whenever an order was placed through this process's intake (after its commit) */
  onOrderPlaced(listener: () => void): () => void;
}

/** The volume fee quotes fold in: the schedule in force at the time (the upcoming one once its time has come). */
function quoteVolumeFee(fees: Config['fees']): (sellToken: Address, buyToken: Address, nowSeconds: number) => number {
  return (sellToken, buyToken, nowSeconds) => quoteVolumeFactor(fees.upcoming && nowSeconds * 1000 >= fees.upcoming.from ? fees.upcoming.policies : fees.policies, sellToken, buyToken);
}

export function buildOrderBookServices(
  network: ChainNetwork,
  db: Kysely<DB>,
  config: Config,
  appData: AppDataService,
  now: () => number = DEFAULT_ORDER_POLICY.now,
  onProviderError?: (err: unknown) => void,
  /** where order signatures' curve arithmetic runs (default: the calling thread) */
  recoverAddress?: RecoverAddress,
  /** GET /orders/{uid}/status, given this network's orders (the auction layer's competition status; default: null for every order) */
  competitionStatusOf: (orders: OrderRepository) => CompetitionStatusOf = () => async () => null,
): OrderBookBuild {
  const { chainId, settlement, reader } = network;
  const estimators: TradeEstimator[] = [];
  // pool reserves read once per block (the block feed's head), routes computed in memory
  const reserves = network.amm ? new PoolReserves({ client: network.client, factory: network.amm.factory, blockFeed: reader.blockFeed }) : null;
  if (network.amm) estimators.push(new UniswapV2Estimator({ client: network.client as never, router: network.amm.router, connectors: network.connectors, reserves }));
  if (config.externalQuoteUrl) {
    estimators.push(new ExternalOrderBookEstimator({ baseUrl: config.externalQuoteUrl, timeoutMs: config.outboundTimeoutMs, from: settlement }));
  }
  const estimator: TradeEstimator =
    estimators.length === 0 ? new NoEstimator() : estimators.length === 1 ? estimators[0]! : new BestOfEstimators(estimators, onProviderError);
  const nativePrices: NativePriceSource =
    network.amm && network.wrappedNative
      ? new AmmNativePrice({ client: network.client as never, factory: network.amm.factory, wrappedNative: network.wrappedNative, connectors: network.connectors })
      : { nativePrice: async () => null };
  const policy = { ...DEFAULT_ORDER_POLICY, bannedAddresses: config.bannedAddresses, deniedTokens: config.deniedTokens, now };
  const quotes = new QuoteService({
    chainId, db, appData, estimator, nativePrices, policy, wrappedNative: network.wrappedNative,
    volumeFee: config.fees ? quoteVolumeFee(config.fees) : undefined,
    chain: { gasPrice: perBlock(reader.blockFeed, () => reader.gasPrice()), tokenMetadata: (t) => reader.tokenMetadata(t) },
  });
  // concurrent order inserts grouped on PGlite (one statement at a time anyway), side by side over a PostgreSQL pool
  const repo = new PlacedOrdersRepository(db, { groupInserts: config.databaseUrl === null });
  const orders = new OrderService({
    chainId, settlement, wrappedNative: network.wrappedNative, orders: repo, appData, quoter: quotes, policy, recoverAddress,
    tradeFees: new TradeFeeReader({ chainId, db }),
    chain: {
      async balanceAndAllowance(owner, token, preHooks = []) {
        // concurrent orders' reads share Multicall3 calls
        const r = await reader.balanceAndAllowance(owner, token, network.vaultRelayer);
        const balance = r.balance ?? 0n;
        const allowance = r.allowance ?? 0n;
        const granted = await preHookAllowance(reader, { hooks: preHooks, owner, token, spender: network.vaultRelayer, trampoline: network.hooksTrampoline, now: now() });
        return { balance, allowance: granted > allowance ? granted : allowance };
      },
      isValidSignature1271: (owner, digest, signature) => reader.isValidSignature1271(owner, digest, signature, { caller: settlement }),
    },
  });
  const cancellations = new CancellationService({ chainId, settlement, orders: repo, now });
  const trades = new TradeService({ chainId, db, nativePrice: (t: Address) => nativePrices.nativePrice(t) });
  const competitionStatus = competitionStatusOf(repo);
  return {
    services: { appData, orders, cancellations, trades, quotes, nativePrices, competitionStatus },
    estimator,
    nativePrices,
    orders: repo,
    onOrderPlaced: (listener) => repo.onPlaced(listener),
  };
}
