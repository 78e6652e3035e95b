/** Price estimation behind one interface: on-chain AMM routing by default, optional external estimators. */
import type { Address } from 'viem';

export interface TradeEstimateRequest {
  sellToken: Address;
  buyToken: Address;
  kind: 'sell' | 'buy';
  /** sell: the amount sold; buy: the amount bought (atoms) */
  amount: bigint;
}

export interface TradeEstimate {
  /** sell: the amount bought; buy: the amount to sell (atoms) */
  outAmount: bigint;
  /** gas units a settlement of this trade costs */
  gas: bigint;
  /** name of the estimator that produced it (stored as the quote's solver) */
  solver: string;
  verified: boolean;
}

export interface TradeEstimator {
  readonly name: string;
  /** throws OrderBookError('NoLiquidity') when there is no route at this amount */
  estimate(request: TradeEstimateRequest): Promise<TradeEstimate>;
}

export interface NativePriceSource {
  /** native-token atoms per token atom (the wrapped native token is 1), or null when unknown */
  nativePrice(token: Address): Promise<number | null>;
}
