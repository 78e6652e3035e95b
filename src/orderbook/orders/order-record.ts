/**
 * The order record of the API (GET /orders/{uid}, account orders, orders by transaction), reference
 * orderbook.md §9.1. Amounts are decimal strings, addresses lowercase, timestamps ISO 8601 UTC.
 */
import { parseAppDataDocument, WRAP_ALL_CALLDATA } from '../../protocol/index.js';
import type { StoredOrder } from './order-repository.js';
import { isInvalidated, orderStatus } from './order-status.js';

export interface OrderInteraction {
  target: string;
  value: string;
  callData: string;
}

function interactionsOf(fullAppData: string | null): { pre: OrderInteraction[]; post: OrderInteraction[] } {
  if (!fullAppData) return { pre: [], post: [] };
  try {
    const { hooks } = parseAppDataDocument(fullAppData).protocol;
    const map = (h: { target: string; callData: string }) => ({ target: h.target, value: '0', callData: h.callData });
    return { pre: hooks.pre.map(map), post: hooks.post.map(map) };
  } catch {
    return { pre: [], post: [] };
  }
}

/**
 * `executedFee`: network + protocol + partner fees of the order's executions, in the sell token (issue 23; the
 * signed fee, 0 since CIP-38, is `executedFeeAmount`).
 */
export function toOrderRecord(order: StoredOrder, nowSeconds: number, executedFee = 0n): Record<string, unknown> {
  const record: Record<string, unknown> = {
    creationDate: order.createdAt.toISOString(),
    owner: order.owner,
    uid: order.uid,
    availableBalance: null,
    executedBuyAmount: order.executedBuy.toString(),
    executedSellAmount: order.executedSell.toString(),
    executedSellAmountBeforeFees: (order.executedSell - order.executedFee).toString(),
    executedFeeAmount: order.executedFee.toString(),
    executedFee: (order.executedFee + executedFee).toString(),
    executedFeeToken: order.sellToken,
    invalidated: isInvalidated(order),
    status: orderStatus(order, nowSeconds),
    class: order.class,
    settlementContract: order.settlementContract,
    isLiquidityOrder: order.class === 'liquidity',
    fullAppData: order.fullAppData,
    sellToken: order.sellToken,
    buyToken: order.buyToken,
    receiver: order.receiver,
    sellAmount: order.sellAmount.toString(),
    buyAmount: order.buyAmount.toString(),
    validTo: order.validTo,
    appData: order.appData,
    feeAmount: order.feeAmount.toString(),
    kind: order.kind,
    partiallyFillable: order.partiallyFillable,
    sellTokenBalance: order.sellTokenBalance,
    buyTokenBalance: order.buyTokenBalance,
    signingScheme: order.signingScheme,
    signature: order.signingScheme === 'presign' ? '0x' : order.signature,
    interactions: interactionsOf(order.fullAppData),
  };
  // spec §3: `onchainUser` tells that an on-chain cancellation (invalidateOrder by the owner) is the source
  if (order.invalidatedOnChain) record.onchainUser = order.owner;
  if (order.ethflow) {
    // as production: the sender of createOrder is the on-chain user; the contract wraps the ETH before the trade
    const { sender, placementError, userValidTo, refundTxHash, contract } = order.ethflow;
    record.onchainUser = sender;
    record.onchainOrderData = { sender, placementError };
    record.ethflowData = { userValidTo, refundTxHash, isRefunded: refundTxHash !== null };
    const interactions = record.interactions as { pre: OrderInteraction[]; post: OrderInteraction[] };
    interactions.pre = [{ target: contract, value: '0', callData: WRAP_ALL_CALLDATA }, ...interactions.pre];
  }
  if (order.validFrom !== null) record.validFrom = order.validFrom;
  if (order.quote) {
    record.quote = {
      gasAmount: order.quote.gasAmount.toString(),
      gasPrice: order.quote.gasPrice.toString(),
      sellTokenPrice: String(order.quote.sellTokenPrice),
      sellAmount: order.quote.sellAmount.toString(),
      buyAmount: order.quote.buyAmount.toString(),
      feeAmount: order.quote.feeAmount.toString(),
      solver: order.quote.solver,
      verified: order.quote.verified,
    };
  }
  return record;
}
