/** What every order-book route of one network needs: the network and that network's services. */
import type { RateLimitConfig } from '../../config/config.js';
import type { Hex } from 'viem';
import type { AppDataService } from '../app-data.js';
import type { OrderService } from '../orders/order-service.js';
import type { CancellationService } from '../orders/cancellation-service.js';
import type { TradeService } from '../trades/trade-service.js';
import type { QuoteService } from '../quotes/quote-service.js';
import type { NativePriceSource } from '../pricing/trade-estimator.js';

export interface CompetitionStatusBody {
  type: 'open' | 'scheduled' | 'active' | 'solved' | 'executing' | 'traded' | 'cancelled';
  value?: Array<{ solver: string; executedAmounts?: { sell: string; buy: string } }>;
}

/** Where an order stands in the solver competition (null: unknown order); the auction layer provides it. */
export type CompetitionStatusOf = (uid: Hex) => Promise<CompetitionStatusBody | null>;

export interface OrderBookNetworkServices {
  appData: AppDataService;
  orders: OrderService;
  cancellations: CancellationService;
  trades: TradeService;
  quotes: QuoteService;
  nativePrices: NativePriceSource;
  /** GET /orders/{uid}/status: where the order is in the competition (null: unknown order) */
  competitionStatus: CompetitionStatusOf;
}

export interface OrderBookRouteContext {
  network: { name: string; chainId: number };
  services: OrderBookNetworkServices;
  rateLimit: RateLimitConfig;
  version: string;
}
