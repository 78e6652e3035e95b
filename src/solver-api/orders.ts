/**
 * Orders between our auction (`SolvableOrder`, with what the chain says about it) and the Solver Engine API's
 * `Order`. As production's driver sends them: `fullSellAmount`/`fullBuyAmount` are the signed amounts and
 * `sellAmount`/`buyAmount` what may still be solved — for a partially fillable order the part left and funded
 * by its owner's balance, at its limit price rounded against the trader (the buy side up for sell orders, the
 * sell side down for buy orders); a fill-or-kill order always shows its full amounts. The signed fee is 0
 * (the order book accepts no other since CIP-38). The engine side reads the same fields back into a
 * `SolvableOrder` whose `remaining`/`available` are those amounts, so engines see exactly what the wire says.
 */
import { zeroAddress, type Address, type Hex } from 'viem';
import type { SolvableOrder } from '../solver/auction-types.js';
import type { SigningSchemeName } from '../orderbook/orders/order-fields.js';
import type { FeePolicy } from '../protocol/index.js';
import type { SolverOrder, SolverInteraction } from './schemas.js';

const ceilDiv = (x: bigint, y: bigint): bigint => (x + y - 1n) / y;
const lower = (a: string): Address => a.toLowerCase() as Address;

const SCHEMES: Record<SigningSchemeName, SolverOrder['signingScheme']> = { eip712: 'eip712', ethsign: 'ethSign', presign: 'preSign', eip1271: 'eip1271' };
const SCHEMES_BACK = Object.fromEntries(Object.entries(SCHEMES).map(([k, v]) => [v, k])) as Record<SolverOrder['signingScheme'], SigningSchemeName>;

/** What is left to solve of an order, in both tokens, at its limit price (see the module comment). */
export function solvableAmounts(o: Pick<SolvableOrder, 'kind' | 'partiallyFillable' | 'sellAmount' | 'buyAmount' | 'remaining' | 'available'>): { sell: bigint; buy: bigint } {
  if (!o.partiallyFillable) return { sell: o.sellAmount, buy: o.buyAmount };
  if (o.kind === 'sell') {
    const sell = o.remaining < o.available ? o.remaining : o.available;
    return { sell, buy: ceilDiv(sell * o.buyAmount, o.sellAmount) };
  }
  const byBalance = (o.available * o.buyAmount) / o.sellAmount;
  const buy = o.remaining < byBalance ? o.remaining : byBalance;
  return { sell: (buy * o.sellAmount) / o.buyAmount, buy };
}

function interaction(i: { target: Address; value: bigint; callData: Hex }): SolverInteraction {
  return { kind: 'custom', target: i.target, value: i.value, callData: i.callData, allowances: [], inputs: [], outputs: [] };
}

/**
 * The auction's orders as the wire sends them, oldest first. An order's `available` is its owner's balance shared
 * by its orders of one sell token, while each wire order says what it alone may use, and an engine reading the wire
 * may fill every order up to that. So that no engine sees more of an owner than it has (issue 19, major 9): the
 * fill-or-kill orders' needs come first (the auction build admits only those that fit together), then each partially
 * fillable order, oldest first, is offered only what the earlier ones leave.
 */
export function toSolverOrders(orders: readonly SolvableOrder[]): SolverOrder[] {
  const sorted = [...orders].sort((x, y) => x.created - y.created || (x.uid < y.uid ? -1 : 1));
  const left = new Map<string, bigint>();
  const share = (o: SolvableOrder) => `${o.owner}:${o.sellToken}`;
  for (const o of sorted) if (!left.has(share(o))) left.set(share(o), o.available);
  for (const o of sorted) if (!o.partiallyFillable) left.set(share(o), left.get(share(o))! - (o.sellAmount + o.feeAmount));
  return sorted.flatMap((o) => {
    if (!o.partiallyFillable) return [toSolverOrder(o)];
    const rest = left.get(share(o))!;
    const offered = rest < o.available ? rest : o.available;
    const wire = offered > 0n ? toSolverOrder({ ...o, available: offered }) : null;
    // nothing left for it in this auction: not sent (an order offered nothing cannot be filled)
    if (!wire || wire.sellAmount === 0n || wire.buyAmount === 0n) return [];
    // what it may take at most: its sell side plus the fee share its limit allows (within `offered`)
    const taken = wire.sellAmount + (o.sellAmount > 0n ? (o.feeAmount * wire.sellAmount) / o.sellAmount : 0n);
    left.set(share(o), rest - (taken < offered ? taken : offered));
    return [wire];
  });
}

export function toSolverOrder(o: SolvableOrder): SolverOrder {
  const { sell, buy } = solvableAmounts(o);
  return {
    uid: o.uid,
    sellToken: o.sellToken,
    buyToken: o.buyToken,
    sellAmount: sell,
    fullSellAmount: o.sellAmount,
    buyAmount: buy,
    fullBuyAmount: o.buyAmount,
    // every engine sees the policies batchbook applies on top of its solution (it need not apply them itself)
    feePolicies: o.feePolicies.map(wireFeePolicy),
    validTo: o.validTo,
    kind: o.kind,
    receiver: o.receiver ?? zeroAddress,
    owner: o.owner,
    partiallyFillable: o.partiallyFillable,
    preInteractions: o.preInteractions.map(interaction),
    postInteractions: o.postInteractions.map((i) => ({ target: i.target, value: i.value, callData: i.callData })),
    sellTokenSource: o.sellTokenBalance,
    buyTokenDestination: o.buyTokenBalance,
    class: o.class === 'market' ? 'market' : 'limit',
    appData: o.appData,
    signingScheme: SCHEMES[o.signingScheme],
    signature: o.signature,
  };
}

/** The engine side's view of a wire order; `position` (its index in the auction) stands in for its creation time. */
export function fromSolverOrder(o: SolverOrder, position: number): SolvableOrder {
  const sellAmount = o.fullSellAmount ?? o.sellAmount;
  const receiver = o.receiver ? lower(o.receiver) : null;
  return {
    uid: o.uid.toLowerCase() as Hex,
    owner: lower(o.owner),
    created: position,
    sellToken: lower(o.sellToken),
    buyToken: lower(o.buyToken),
    receiver: receiver === zeroAddress ? null : receiver,
    sellAmount,
    buyAmount: o.fullBuyAmount,
    validTo: o.validTo,
    appData: o.appData.toLowerCase() as Hex,
    feeAmount: 0n,
    kind: o.kind,
    partiallyFillable: o.partiallyFillable,
    sellTokenBalance: o.sellTokenSource,
    buyTokenBalance: o.buyTokenDestination,
    class: o.class,
    signingScheme: SCHEMES_BACK[o.signingScheme],
    signature: o.signature as Hex,
    executedSell: 0n,
    executedBuy: 0n,
    executedFee: 0n,
    remaining: o.kind === 'sell' ? o.sellAmount : o.buyAmount,
    // a buy order may pay up to its limit for what is left
    available: o.kind === 'sell' ? o.sellAmount : o.buyAmount === o.fullBuyAmount ? sellAmount : ceilDiv(o.buyAmount * sellAmount, o.fullBuyAmount),
    preInteractions: [],
    postInteractions: [],
    hookGas: 0n,
    quote: null,
    feePolicies: (o.feePolicies ?? []).map(feePolicyOfWire),
  };
}

type WireFeePolicy = NonNullable<SolverOrder['feePolicies']>[number];

function wireFeePolicy(p: FeePolicy): WireFeePolicy {
  if (p.kind === 'surplus') return { surplus: { factor: p.factor, maxVolumeFactor: p.maxVolumeFactor } };
  if (p.kind === 'priceImprovement') return { priceImprovement: { factor: p.factor, maxVolumeFactor: p.maxVolumeFactor, quote: { ...p.quote } } };
  return { volume: { factor: p.factor } };
}

function feePolicyOfWire(p: WireFeePolicy): FeePolicy {
  if ('surplus' in p) return { kind: 'surplus', factor: p.surplus.factor, maxVolumeFactor: p.surplus.maxVolumeFactor };
  if ('priceImprovement' in p) {
    const { factor, maxVolumeFactor, quote } = p.priceImprovement;
    return { kind: 'priceImprovement', factor, maxVolumeFactor, quote: { sellAmount: quote.sellAmount, buyAmount: quote.buyAmount, fee: quote.fee } };
  }
  return { kind: 'volume', factor: p.volume.factor };
}
