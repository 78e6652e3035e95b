/**
 * What each trigger announces, as pure functions: a fill (order_filled or order_partially_filled, plus
 * price_improvement when the fill beat the limit price by at least the threshold), an expiry, a cancellation and
 * an insufficient balance or allowance. Inputs are rows the producer read from the database; token labels come
 * from the chain reader.
 */
import type { Address, Hex } from 'viem';
import { amountText, shortAddress, type TokenLabel } from './amount-text.js';
import { notificationId } from './notification-id.js';
import type { ProducedNotification } from './notification-types.js';

export interface OrderFacts {
  uid: Hex;
  owner: Address;
  kind: 'sell' | 'buy';
  sellToken: Address;
  buyToken: Address;
  /** limit amounts of the order (sell amount before fee) */
  sellAmount: bigint;
  buyAmount: bigint;
}

export interface FillFacts {
  order: OrderFacts;
  txHash: Hex;
  logIndex: number;
  blockNumber: number;
  timestamp: Date;
  /** the Trade event's amounts: sell includes the fee */
  sellAmount: bigint;
  buyAmount: bigint;
  feeAmount: bigint;
  /** executed before this fill, in the order's kind unit (sell: sell amount before fee; buy: buy amount) */
  executedBefore: bigint;
}

export interface ChainLabel {
  chainId: number;
  /** network name for messages ("devnet", "mainnet") */
  name: string;
}

export type TokenLabels = (token: Address) => TokenLabel | null;

const BPS = 10_000n;

function text(labels: TokenLabels, token: Address, amount: bigint): string {
  return amountText(amount, labels(token), token);
}

function symbol(labels: TokenLabels, token: Address): string {
  return labels(token)?.symbol ?? shortAddress(token);
}

/** The order's own description: "sell 0.1 WETH for at least 290 USDC" / "buy 300 USDC for at most 0.11 WETH". */
export function orderText(order: OrderFacts, labels: TokenLabels): string {
  return order.kind === 'sell'
    ? `sell ${text(labels, order.sellToken, order.sellAmount)} for at least ${text(labels, order.buyToken, order.buyAmount)}`
    : `buy ${text(labels, order.buyToken, order.buyAmount)} for at most ${text(labels, order.sellToken, order.sellAmount)}`;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** Surplus of a fill over the limit price, in the token the order gains in (sell orders: buy token; buy orders: sell token). */
export function fillSurplus(fill: FillFacts): { surplus: bigint; limit: bigint; token: Address } {
  const { order } = fill;
  const executedSell = fill.sellAmount - fill.feeAmount;
  if (order.kind === 'sell') {
    const limit = order.sellAmount === 0n ? 0n : ceilDiv(executedSell * order.buyAmount, order.sellAmount);
    return { surplus: fill.buyAmount - limit, limit, token: order.buyToken };
  }
  const limit = order.buyAmount === 0n ? 0n : (fill.buyAmount * order.sellAmount) / order.buyAmount;
  return { surplus: limit - executedSell, limit, token: order.sellToken };
}

/** order_filled or order_partially_filled for one Trade event, plus price_improvement when it beat the limit by `thresholdBps`. */
export function fillNotifications(fill: FillFacts, chain: ChainLabel, labels: TokenLabels, thresholdBps: number): ProducedNotification[] {
  const { order } = fill;
  const executed = order.kind === 'sell' ? fill.sellAmount - fill.feeAmount : fill.buyAmount;
  const total = order.kind === 'sell' ? order.sellAmount : order.buyAmount;
  const complete = fill.executedBefore + executed >= total;
  const type = complete ? 'order_filled' : 'order_partially_filled';
  const sold = text(labels, order.sellToken, fill.sellAmount);
  const bought = text(labels, order.buyToken, fill.buyAmount);
  const base = {
    orderId: order.uid,
    chainId: chain.chainId,
    executedAmount: executed.toString(),
    txHash: fill.txHash,
    logIndex: fill.logIndex,
    blockNumber: fill.blockNumber,
    kind: order.kind,
    sellToken: order.sellToken,
    buyToken: order.buyToken,
    sellAmount: fill.sellAmount.toString(),
    buyAmount: fill.buyAmount.toString(),
    feeAmount: fill.feeAmount.toString(),
  };
  const percent = total === 0n ? 100 : Number(((fill.executedBefore + executed) * 10_000n) / total) / 100;
  const out: ProducedNotification[] = [
    {
      id: notificationId(type, chain.chainId, order.uid, fill.txHash, fill.logIndex),
      chainId: chain.chainId,
      account: order.owner,
      type,
      message: complete
        ? `Sold ${sold} for ${bought} on ${chain.name}`
        : `Partially filled: sold ${sold} for ${bought} on ${chain.name} (${percent}% of the order filled)`,
      timestamp: fill.timestamp,
      metadata: { ...base, totalExecutedAmount: (fill.executedBefore + executed).toString(), filledPercent: percent },
    },
  ];
  const { surplus, limit, token } = fillSurplus(fill);
  if (limit > 0n && surplus > 0n && surplus * BPS >= BigInt(thresholdBps) * limit) {
    const bps = Number((surplus * BPS * 100n) / limit) / 100;
    out.push({
      id: notificationId('price_improvement', chain.chainId, order.uid, fill.txHash, fill.logIndex),
      chainId: chain.chainId,
      account: order.owner,
      type: 'price_improvement',
      message: `Price improvement: ${text(labels, token, surplus)} (${bps}%) better than your limit price ${order.kind === 'sell' ? 'selling' : 'buying'} ${symbol(labels, order.kind === 'sell' ? order.sellToken : order.buyToken)} on ${chain.name}`,
      timestamp: fill.timestamp,
      metadata: { ...base, surplus: surplus.toString(), surplusToken: token, surplusBps: bps / 1, limitAmount: limit.toString() },
    });
  }
  return out;
}

export function expiredNotification(order: OrderFacts & { validTo: number; executed: bigint }, chain: ChainLabel, labels: TokenLabels): ProducedNotification {
  const total = order.kind === 'sell' ? order.sellAmount : order.buyAmount;
  const filled = order.executed > 0n ? ` (${Number((order.executed * 10_000n) / total) / 100}% filled)` : '';
  return {
    id: notificationId('order_expired', chain.chainId, order.uid),
    chainId: chain.chainId,
    account: order.owner,
    type: 'order_expired',
    message: `Your order to ${orderText(order, labels)} expired on ${chain.name}${filled}`,
    timestamp: new Date(order.validTo * 1000),
    metadata: { orderId: order.uid, chainId: chain.chainId, validTo: order.validTo, executedAmount: order.executed.toString(), sellToken: order.sellToken, buyToken: order.buyToken },
  };
}

export interface CancellationFacts {
  uid: Hex;
  owner: Address;
  /** null when the order is not in our book (cancelled on chain only) */
  order: OrderFacts | null;
  by: 'api' | 'onchain';
  timestamp: Date;
  txHash: Hex | null;
}

export function cancelledNotification(c: CancellationFacts, chain: ChainLabel, labels: TokenLabels): ProducedNotification {
  const what = c.order ? `Your order to ${orderText(c.order, labels)}` : `Order ${shortAddress(c.uid)}`;
  return {
    id: notificationId('order_cancelled', chain.chainId, c.uid),
    chainId: chain.chainId,
    account: c.owner,
    type: 'order_cancelled',
    message: `${what} was cancelled ${c.by === 'api' ? '' : 'on chain '}on ${chain.name}`,
    timestamp: c.timestamp,
    metadata: {
      orderId: c.uid,
      chainId: chain.chainId,
      cancelledBy: c.by,
      ...(c.txHash ? { txHash: c.txHash } : {}),
      ...(c.order ? { sellToken: c.order.sellToken, buyToken: c.order.buyToken } : {}),
    },
  };
}

export function insufficientBalanceNotification(
  order: OrderFacts,
  event: { id: number; reason: 'insufficient_balance' | 'insufficient_allowance'; timestamp: Date },
  chain: ChainLabel,
  labels: TokenLabels,
): ProducedNotification {
  const token = symbol(labels, order.sellToken);
  const what = event.reason === 'insufficient_balance' ? `your ${token} balance is too low` : `the ${token} allowance for the vault relayer is too low`;
  return {
    id: notificationId('insufficient_balance', chain.chainId, order.uid, event.id),
    chainId: chain.chainId,
    account: order.owner,
    type: 'insufficient_balance',
    message: `Your order to ${orderText(order, labels)} on ${chain.name} cannot be filled: ${what}`,
    timestamp: event.timestamp,
    metadata: { orderId: order.uid, chainId: chain.chainId, reason: event.reason, sellToken: order.sellToken, sellAmount: order.sellAmount.toString() },
  };
}
