/**
 * The batch auction: what solvers receive (`SolvableOrder`, `Auction`) and what the API serves (`AuctionJson`,
 * reference orderbook.md §8.1). Amounts are bigint inside, decimal strings on the wire; addresses lowercase.
 */
import type { Address, Hex } from 'viem';
import { executedAmount, feePolicyJson, type FeePolicy, type FeePolicyJson, type SettlementInteraction } from '../protocol/index.js';
import type { ExecutedAmounts, StoredOrderFields } from '../orderbook/orders/order-fields.js';

/** An order's pre- or post-interaction (app-data hook), as the settlement would call it. */
export type OrderInteraction = SettlementInteraction;

/** An order of the auction, with what the chain says about it (fills, balance) at the auction's block. */
export interface SolvableOrder extends Omit<StoredOrderFields, 'sellTokenBalance' | 'buyTokenBalance'>, ExecutedAmounts {
  /** unix seconds */
  created: number;
  sellTokenBalance: 'erc20' | 'external' | 'internal';
  buyTokenBalance: 'erc20' | 'internal';
  /** what may still be filled: sell amount (sell orders, before fees) or buy amount (buy orders) */
  remaining: bigint;
  /** min(balance, allowance) of the owner in the sell token at the auction's block */
  available: bigint;
  preInteractions: OrderInteraction[];
  postInteractions: OrderInteraction[];
  /** gas the settlement spends on this order's hooks in this auction (trampoline included); 0 without hooks */
  hookGas: bigint;
  quote: { sellAmount: bigint; buyAmount: bigint; fee: bigint; solver: string } | null;
  /** the protocol and partner fee policies of this order in this auction, in order of application (issue 23) */
  feePolicies: FeePolicy[];
}

export interface Auction {
  chainId: number;
  id: number;
  block: number;
  /** the block's timestamp (seconds): validity is judged against it */
  timestamp: number;
  orders: SolvableOrder[];
  /** native-token atoms × 1e18 per token atom (reference §8.1); every token of every order has one */
  prices: Map<Address, bigint>;
  /** the settlement contract the orders are signed for */
  settlement: Address;
}

/** Why an order is not in the auction, as an order event (labels and reasons as upstream). */
export interface ExcludedOrder {
  uid: Hex;
  label: 'filtered' | 'invalid';
  reason: string;
}

export interface AuctionOrderJson {
  uid: Hex;
  sellToken: Address;
  buyToken: Address;
  sellAmount: string;
  buyAmount: string;
  protocolFees: FeePolicyJson[];
  created: number;
  validTo: number;
  kind: 'sell' | 'buy';
  receiver: Address | null;
  owner: Address;
  partiallyFillable: boolean;
  executed: string;
  preInteractions: Array<{ target: Address; value: string; callData: Hex }>;
  postInteractions: Array<{ target: Address; value: string; callData: Hex }>;
  sellTokenBalance: string;
  buyTokenBalance: string;
  class: string;
  appData: Hex;
  signingScheme: string;
  signature: Hex;
  quote: { sellAmount: string; buyAmount: string; fee: string; solver: string } | null;
}

export interface AuctionJson {
  id: number;
  block: number;
  orders: AuctionOrderJson[];
  prices: Record<string, string>;
  surplusCapturingJitOrderOwners: Address[];
}

/** 1e18: a native price of 1e18 means the token trades 1:1 with the native token (atom for atom). */
export const PRICE_SCALE = 10n ** 18n;

function interactionsJson(list: OrderInteraction[]) {
  return list.map((i) => ({ target: i.target, value: i.value.toString(), callData: i.callData }));
}

/** The executed amount the API reports: sell amount before fees (sell orders) or buy amount (buy orders). */
export const executedOf: (order: Pick<SolvableOrder, 'kind' | 'executedSell' | 'executedBuy' | 'executedFee'>) => bigint = executedAmount;

export function auctionOrderJson(o: SolvableOrder): AuctionOrderJson {
  return {
    uid: o.uid,
    sellToken: o.sellToken,
    buyToken: o.buyToken,
    sellAmount: o.sellAmount.toString(),
    buyAmount: o.buyAmount.toString(),
    protocolFees: o.feePolicies.map(feePolicyJson),
    created: o.created,
    validTo: o.validTo,
    kind: o.kind,
    receiver: o.receiver,
    owner: o.owner,
    partiallyFillable: o.partiallyFillable,
    executed: executedOf(o).toString(),
    preInteractions: interactionsJson(o.preInteractions),
    postInteractions: interactionsJson(o.postInteractions),
    sellTokenBalance: o.sellTokenBalance,
    buyTokenBalance: o.buyTokenBalance,
    class: o.class,
    appData: o.appData,
    signingScheme: o.signingScheme,
    signature: o.signingScheme === 'presign' ? '0x' : o.signature,
    quote: o.quote ? { sellAmount: o.quote.sellAmount.toString(), buyAmount: o.quote.buyAmount.toString(), fee: o.quote.fee.toString(), solver: o.quote.solver } : null,
  };
}

export function auctionJson(auction: Auction): AuctionJson {
  return {
    id: auction.id,
    block: auction.block,
    orders: auction.orders.map(auctionOrderJson),
    prices: Object.fromEntries([...auction.prices].map(([token, price]) => [token, price.toString()])),
    surplusCapturingJitOrderOwners: [],
  };
}
