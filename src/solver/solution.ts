/**
 * A solver's proposal for one auction, how it is scored (CIP-38: surplus + protocol fees in native token) and
 * checked before it may compete: every limit price holds for the executed amounts exactly as the settlement
 * contract checks it, no order is filled beyond what is left or beyond its owner's balance, and the settlement
 * contract ends with at least as much of every token as it started with (no buffers are spent).
 */
import type { Address, Hex } from 'viem';
import type { FeePolicy, SettlementInteraction } from '../protocol/index.js';
import { PRICE_SCALE, type Auction, type SolvableOrder } from './auction-types.js';

/** A call the settlement contract makes (GPv2Interaction.Data). */
export type Interaction = SettlementInteraction;

/** ⌈x / y⌉ for positive y, as GPv2 SafeMath.ceilDiv. */
export const ceilDiv = (x: bigint, y: bigint): bigint => (x + y - 1n) / y;

/** One order's execution: amounts the owner sends (before the signed fee) and receives. */
export interface ProposedTrade {
  order: SolvableOrder;
  executedSell: bigint;
  executedBuy: bigint;
  /** set when the driver charged the trade its network fee and fee policies: the amounts above include them */
  charges?: TradeCharges;
}

/** What the driver charged a trade (issue 23): its network fee and each policy's fee, at the solution's uniform prices. */
export interface TradeCharges {
  /** the solution's uniform prices of the order's sell and buy token */
  prices: { sell: bigint; buy: bigint };
  /** the engine's network fee, in the sell token */
  networkFee: bigint;
  policies: FeePolicy[];
  /** one per policy, in the surplus token */
  protocolFees: bigint[];
  /** the trade's amounts at the uniform prices before any fee (what the directed pair's uniformity is judged on) */
  atUniform: { sell: bigint; buy: bigint };
}

/** What an interaction does to the settlement contract's balances (an AMM swap: `amountIn` of one token for `amountOut` of another). */
export interface BalanceEffect {
  token: Address;
  delta: bigint;
}

/**
 * The price pair the trades of one directed pair (sell token → buy token) clear at, when they do not clear at
 * the uniform prices: a trade's buy amount is ceil(sell × sellPrice / buyPrice) (sell orders), its sell amount
 * floor(buy × buyPrice / sellPrice) (buy orders), as GPv2Settlement computes them.
 */
export interface DirectedPrice {
  sellToken: Address;
  buyToken: Address;
  sellPrice: bigint;
  buyPrice: bigint;
}

export interface Solution {
  solver: string;
  trades: ProposedTrade[];
  /** uniform clearing prices (token → price); empty when the solution has none (e.g. AMM routes at their own rates) */
  clearingPrices: Map<Address, bigint>;
  /** optional: one price pair per directed pair whose trades do not clear at `clearingPrices` (the AMM router's aggregates) */
  directedPrices?: DirectedPrice[];
  interactions: { pre: Interaction[]; intra: Interaction[]; post: Interaction[] };
  /** the balance changes the interactions cause to the settlement contract, as the solver modelled them */
  interactionEffects: BalanceEffect[];
  /** set when the solution was refused before scoring (an engine's answer the Solver Engine API check refused): why */
  rejected?: string;
}

export interface Solver {
  readonly name: string;
  /**
   * false: an engine the node does not run itself (an external one over HTTP). Its failures never blame orders by
   * its own word: the failing-order search then probes with the node's own engines (default: true).
   */
  readonly trusted?: boolean;
  solve(auction: Auction): Promise<Solution[]>;
}

/** The signed fee charged for an execution, as GPv2Settlement computes it. */
export function executedFeeOf(order: SolvableOrder, executedSell: bigint, executedBuy: bigint): bigint {
  if (!order.partiallyFillable) return order.feeAmount;
  return order.kind === 'sell' ? (order.feeAmount * executedSell) / order.sellAmount : (order.feeAmount * executedBuy) / order.buyAmount;
}

/**
 * Surplus of one trade in native-token atoms (floor): a sell order's is what it bought beyond its limit for the
 * amount it sold (in buy token), a buy order's what it kept below its limit for the amount it bought (in sell token).
 */
export function surplusInNative(trade: ProposedTrade, prices: Map<Address, bigint>): bigint {
  const { order, executedSell, executedBuy } = trade;
  if (order.kind === 'sell') {
    const price = prices.get(order.buyToken) ?? 0n;
    // (executedBuy - executedSell × buyAmount / sellAmount) × price / 1e18
    const scaled = executedBuy * order.sellAmount - executedSell * order.buyAmount;
    return scaled <= 0n ? 0n : (scaled * price) / (order.sellAmount * PRICE_SCALE);
  }
  const price = prices.get(order.sellToken) ?? 0n;
  const scaled = executedBuy * order.sellAmount - executedSell * order.buyAmount;
  return scaled <= 0n ? 0n : (scaled * price) / (order.buyAmount * PRICE_SCALE);
}

/** The protocol fees the driver charged a trade, in native atoms (each in the surplus token, at the auction's price). */
export function protocolFeesInNative(trade: ProposedTrade, prices: Map<Address, bigint>): bigint {
  if (!trade.charges) return 0n;
  const { order } = trade;
  const price = prices.get(order.kind === 'sell' ? order.buyToken : order.sellToken) ?? 0n;
  return (trade.charges.protocolFees.reduce((a, b) => a + b, 0n) * price) / PRICE_SCALE;
}

/**
 * CIP-38 score: Σ surplus after fees + protocol fees, in native atoms,
 * less what the orders' hooks cost to run (their gas at `gasPrice`, wei = native atoms): a solution that settles
 * expensive hooks must bring the surplus to pay for them.
 */
export function scoreSolution(solution: Solution, prices: Map<Address, bigint>, gasPrice = 0n): bigint {
  let score = 0n;
  for (const trade of solution.trades) score += surplusInNative(trade, prices) + protocolFeesInNative(trade, prices) - trade.order.hookGas * gasPrice;
  return score;
}

/**
 * The solution with its orders' hooks as settlement interactions: each traded order's pre-interactions (its
 * pre-hooks through the trampoline, present only before its first fill) before the solver's own, its
 * post-interactions after them. Whatever engine produced the solution, hooks are settled the same way; an
 * engine that already included them gets no second copy.
 */
export function withOrderHooks(solution: Solution): Solution {
  const same = (a: Interaction, b: Interaction): boolean => a.target === b.target && a.callData === b.callData && a.value === b.value;
  const missing = (list: readonly Interaction[], wanted: Interaction[]): Interaction[] => wanted.filter((w) => !list.some((i) => same(i, w)));
  const pre = missing(solution.interactions.pre, solution.trades.flatMap((t) => t.order.preInteractions));
  const post = missing(solution.interactions.post, solution.trades.flatMap((t) => t.order.postInteractions));
  if (pre.length === 0 && post.length === 0) return solution;
  const { interactions } = solution;
  return { ...solution, interactions: { pre: [...pre, ...interactions.pre], intra: interactions.intra, post: [...interactions.post, ...post] } };
}

/** The contract's limit check on a trade: sellAmount × executedBuy ≥ buyAmount × executedSell (with per-trade prices). */
export function respectsLimit(order: Pick<SolvableOrder, 'sellAmount' | 'buyAmount'>, executedSell: bigint, executedBuy: bigint): boolean {
  return order.sellAmount * executedBuy >= order.buyAmount * executedSell;
}

export class InvalidSolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSolutionError';
  }
}

const key = (owner: string, token: string): string => `${owner}:${token}`;

/** Throws InvalidSolutionError naming the first rule the solution breaks. */
export function verifySolution(solution: Solution): void {
  if (solution.trades.length === 0) throw new InvalidSolutionError('no trades');
  const seen = new Set<string>();
  const spent = new Map<string, bigint>();
  const net = new Map<Address, bigint>();
  const add = (token: Address, delta: bigint) => net.set(token, (net.get(token) ?? 0n) + delta);
  for (const { order, executedSell, executedBuy } of solution.trades) {
    if (seen.has(order.uid)) throw new InvalidSolutionError(`order ${order.uid} traded twice`);
    seen.add(order.uid);
    if (executedSell <= 0n || executedBuy <= 0n) throw new InvalidSolutionError(`order ${order.uid}: zero amount`);
    if (!respectsLimit(order, executedSell, executedBuy)) throw new InvalidSolutionError(`order ${order.uid}: limit price not respected`);
    const filled = order.kind === 'sell' ? executedSell : executedBuy;
    const full = order.kind === 'sell' ? order.sellAmount : order.buyAmount;
    const fits = order.partiallyFillable ? filled <= order.remaining : filled === full && order.remaining === full;
    if (!fits) throw new InvalidSolutionError(`order ${order.uid}: fill ${filled} does not fit what is left (${order.remaining})`);
    const fee = executedFeeOf(order, executedSell, executedBuy);
    const k = key(order.owner, order.sellToken);
    const total = (spent.get(k) ?? 0n) + executedSell + fee;
    if (total > order.available) throw new InvalidSolutionError(`order ${order.uid}: owner balance or allowance too low`);
    spent.set(k, total);
    add(order.sellToken, executedSell + fee);
    add(order.buyToken, -executedBuy);
  }
  for (const effect of solution.interactionEffects) add(effect.token, effect.delta);
  for (const [token, delta] of net) if (delta < 0n) throw new InvalidSolutionError(`the settlement would pay out ${-delta} more ${token} than it receives`);
  const split = nonUniformDirectedPair(solution.trades);
  if (split) throw new InvalidSolutionError(`orders ${split[0]} and ${split[1]} trade the same directed pair at different prices`);
}

/**
 * The first two trades of one directed pair (same sell and buy token) whose prices differ by more than rounding
 * (one atom of either amount), or null: every solution clears each directed pair at one price. Charged trades
 * are compared at their amounts before fees (each order's fees differ; production's custom prices carry them).
 */
export function nonUniformDirectedPair(trades: readonly ProposedTrade[]): [Hex, Hex] | null {
  const first = new Map<string, ProposedTrade>();
  for (const charged of trades) {
    const t = charged.charges ? { ...charged, executedSell: charged.charges.atUniform.sell, executedBuy: charged.charges.atUniform.buy } : charged;
    const k = `${t.order.sellToken}-${t.order.buyToken}`;
    const f = first.get(k);
    if (!f) {
      first.set(k, t);
      continue;
    }
    // buy1/sell1 vs buy2/sell2: |buy1·sell2 − buy2·sell1| within one atom of rounding on each side
    const gap = f.executedBuy * t.executedSell - t.executedBuy * f.executedSell;
    const abs = gap < 0n ? -gap : gap;
    const tolerance = [f.executedSell, t.executedSell, f.executedBuy, t.executedBuy].reduce((m, v) => (v > m ? v : m), 0n);
    if (abs > tolerance) return [f.order.uid, t.order.uid];
  }
  return null;
}

/** Sell amounts an owner has left per (owner, sell token), shared by the orders a solver picks. */
export class BalanceBudget {
  private readonly used = new Map<string, bigint>();

  /** What the order may still take from its owner's balance, given what earlier picks used. */
  left(order: SolvableOrder): bigint {
    const rest = order.available - (this.used.get(key(order.owner, order.sellToken)) ?? 0n);
    return rest > 0n ? rest : 0n;
  }

  take(order: SolvableOrder, amount: bigint): void {
    const k = key(order.owner, order.sellToken);
    this.used.set(k, (this.used.get(k) ?? 0n) + amount);
  }
}
