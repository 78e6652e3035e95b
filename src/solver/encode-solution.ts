/**
 * A solution as a `GPv2Settlement.settle` call. `tokens`/`clearingPrices` start with the solution's uniform
 * prices; a trade whose executed amounts the contract derives exactly from them points there. A trade of a
 * directed pair the solution gives its own price pair (`directedPrices`, e.g. an AMM aggregate) points to that
 * pair, appended once and shared by every trade of the directed pair. Any other trade
 * (an AMM route at its own rate, or amounts rounded in the settlement's favour) gets its own price pair appended
 * — sell token at the executed buy amount, buy token at the executed sell amount — from which the contract
 * computes exactly the executed amounts: ceil(sell × buy / sell) = buy for sell orders, floor(buy × sell / buy)
 * = sell for buy orders. (Upstream's driver encodes per-trade "custom prices" the same way.)
 * The auction id is appended to the calldata as 8 bytes, as upstream does; `settle` ignores trailing bytes.
 */
import { concat, numberToHex, zeroAddress, type Address, type Hex } from 'viem';
import { encodeSettle, encodeSettlementSignature, encodeTradeFlags, type Settlement, type SettlementTrade } from '../protocol/index.js';
import { ceilDiv, type ProposedTrade, type Solution } from './solution.js';

/** Executed amounts the contract computes for a trade at prices (sellPrice, buyPrice), or null if it would revert. */
export function contractExecution(trade: ProposedTrade, sellPrice: bigint, buyPrice: bigint): { sell: bigint; buy: bigint } | null {
  const { order } = trade;
  if (sellPrice <= 0n || buyPrice <= 0n) return null;
  if (order.sellAmount * sellPrice < order.buyAmount * buyPrice) return null; // "GPv2: limit price not respected"
  if (order.kind === 'sell') {
    const sell = order.partiallyFillable ? trade.executedSell : order.sellAmount;
    return { sell, buy: ceilDiv(sell * sellPrice, buyPrice) };
  }
  const buy = order.partiallyFillable ? trade.executedBuy : order.buyAmount;
  return { sell: (buy * buyPrice) / sellPrice, buy };
}

export function toSettlement(solution: Solution): Settlement {
  const tokens: Address[] = [...solution.clearingPrices.keys()];
  const prices: bigint[] = [...solution.clearingPrices.values()];
  const index = new Map(tokens.map((t, i) => [t, i]));
  // the price pair of each directed pair, appended once and shared by all its trades
  const directed = new Map<string, { sellPrice: bigint; buyPrice: bigint; at?: [number, number] }>();
  for (const d of solution.directedPrices ?? []) directed.set(`${d.sellToken}-${d.buyToken}`, { sellPrice: d.sellPrice, buyPrice: d.buyPrice });
  const exact = (trade: ProposedTrade, sellPrice: bigint, buyPrice: bigint): boolean => {
    const e = contractExecution(trade, sellPrice, buyPrice);
    return e !== null && e.sell === trade.executedSell && e.buy === trade.executedBuy;
  };
  const trades: SettlementTrade[] = solution.trades.map((trade) => {
    const { order } = trade;
    let sellIndex = index.get(order.sellToken);
    let buyIndex = index.get(order.buyToken);
    const uniform = sellIndex !== undefined && buyIndex !== undefined ? contractExecution(trade, prices[sellIndex], prices[buyIndex]) : null;
    const pair = directed.get(`${order.sellToken}-${order.buyToken}`);
    if ((!uniform || uniform.sell !== trade.executedSell || uniform.buy !== trade.executedBuy) && pair && exact(trade, pair.sellPrice, pair.buyPrice)) {
      if (!pair.at) {
        const s = tokens.push(order.sellToken) - 1;
        prices.push(pair.sellPrice);
        const b = tokens.push(order.buyToken) - 1;
        prices.push(pair.buyPrice);
        pair.at = [s, b];
      }
      [sellIndex, buyIndex] = pair.at;
    } else if (!uniform || uniform.sell !== trade.executedSell || uniform.buy !== trade.executedBuy) {
      sellIndex = tokens.push(order.sellToken) - 1;
      prices.push(trade.executedBuy);
      buyIndex = tokens.push(order.buyToken) - 1;
      prices.push(trade.executedSell);
    }
    return {
      sellTokenIndex: BigInt(sellIndex!),
      buyTokenIndex: BigInt(buyIndex!),
      receiver: order.receiver ?? zeroAddress,
      sellAmount: order.sellAmount,
      buyAmount: order.buyAmount,
      validTo: order.validTo,
      appData: order.appData,
      feeAmount: order.feeAmount,
      flags: encodeTradeFlags({
        kind: order.kind,
        partiallyFillable: order.partiallyFillable,
        sellTokenBalance: order.sellTokenBalance,
        buyTokenBalance: order.buyTokenBalance,
        signingScheme: order.signingScheme,
      }),
      executedAmount: order.kind === 'sell' ? trade.executedSell : trade.executedBuy,
      signature: encodeSettlementSignature(order.signingScheme, order.signature, order.owner),
    };
  });
  const { pre, intra, post } = solution.interactions;
  return { tokens, clearingPrices: prices, trades, interactions: [pre, intra, post] };
}

/** `settle(...)` calldata with the auction id appended (8 bytes, big-endian). */
export function settlementCalldata(solution: Solution, auctionId: number): Hex {
  return concat([encodeSettle(toSettlement(solution)), numberToHex(BigInt(auctionId), { size: 8 })]);
}
