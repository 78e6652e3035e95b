/**
 * Fee arithmetic of one trade (reference fees.md §5, §8, §9), to the atom as production computes it:
 * - `chargeFeePolicies`: the driver's forward pass — each policy in order, on the trade as the earlier ones left
 *   it, in the surplus token, converted to the sell token through the trade's uniform prices;
 * - `feesFromExecution`: the autopilot's read-back from the executed amounts, last policy first;
 * - `feeInSellToken`: network + protocol fees in the sell token, from the executed amounts and uniform prices;
 * - `volumeFeeAdjustedQuote`: the quote answer with the volume fee folded in.
 * Factors multiply as upstream's `checked_mul_f64`: amount × round(factor × 10¹⁸) / 10¹⁸, rounded down.
 *
 * @example
 *   const t = chargeFeePolicies({ order, prices: { sell: pWeth, buy: pUsdc }, executed, fee }, policies);
 *   t.executedBuy  // what the trader receives (sell order) after every fee
 */
import type { FeePolicy, FeeQuote } from './fee-policy.js';

const WAD = 10n ** 18n;
const ceilDiv = (x: bigint, y: bigint): bigint => (x + y - 1n) / y;

/** amount × factor, rounded down, with the factor at 18 decimals (round half up); a factor of 1 keeps the amount. */
export function mulFactor(amount: bigint, factor: number): bigint {
  if (factor === 1) return amount;
  if (!(factor > 0) || !Number.isFinite(factor)) return 0n;
  return (amount * BigInt(Math.round(factor * 1e18))) / WAD;
}

export interface FeeLimitOrder {
  kind: 'sell' | 'buy';
  /** the signed amounts: the limit price */
  sellAmount: bigint;
  buyAmount: bigint;
}

/** The limit a price-improvement policy measures against: the order's, tightened to its quote (§5, integer division). */
export function quoteAdjustedLimits(order: FeeLimitOrder, quote: FeeQuote): { sell: bigint; buy: bigint } {
  if (quote.sellAmount <= 0n || quote.buyAmount <= 0n) return { sell: order.sellAmount, buy: order.buyAmount };
  if (order.kind === 'sell') {
    const net = quote.buyAmount - (quote.fee * quote.buyAmount) / quote.sellAmount;
    const buy = (net * order.sellAmount) / quote.sellAmount;
    return { sell: order.sellAmount, buy: buy > order.buyAmount ? buy : order.buyAmount };
  }
  const sell = ((quote.sellAmount + quote.fee) * order.buyAmount) / quote.buyAmount;
  return { sell: sell < order.sellAmount ? sell : order.sellAmount, buy: order.buyAmount };
}

export interface ChargeInput {
  order: FeeLimitOrder;
  /** the solution's uniform clearing prices of the order's sell and buy token */
  prices: { sell: bigint; buy: bigint };
  /** sell orders: the sell amount swapped, without its fee; buy orders: the buy amount */
  executed: bigint;
  /** the engine's network fee, in the sell token */
  fee: bigint;
}

export interface ChargedTrade {
  /** sell orders: the sell amount swapped after all fees; buy orders: the buy amount */
  executed: bigint;
  /** network fee + every policy's fee, in the sell token */
  fee: bigint;
  /** one fee per policy, in the surplus token (buy token of a sell order, sell token of a buy order) */
  protocolFees: bigint[];
  /** what the trader pays, fees included, and receives */
  executedSell: bigint;
  executedBuy: bigint;
}

/** Applies the policies in order on top of the network fee (§5) and gives the trader's final amounts. */
export function chargeFeePolicies(input: ChargeInput, policies: readonly FeePolicy[]): ChargedTrade {
  const { order, prices } = input;
  let { executed, fee } = input;
  const protocolFees: bigint[] = [];
  for (const policy of policies) {
    let volume: bigint;
    let surplus = 0n;
    if (order.kind === 'sell') {
      volume = ceilDiv(executed * prices.sell, prices.buy);
      if (policy.kind !== 'volume') {
        const limit = policy.kind === 'priceImprovement' ? quoteAdjustedLimits(order, policy.quote) : { sell: order.sellAmount, buy: order.buyAmount };
        surplus = volume - ceilDiv(limit.buy * (executed + fee), limit.sell);
      }
    } else {
      volume = (executed * prices.buy) / prices.sell + fee;
      if (policy.kind !== 'volume') {
        const limit = policy.kind === 'priceImprovement' ? quoteAdjustedLimits(order, policy.quote) : { sell: order.sellAmount, buy: order.buyAmount };
        surplus = (limit.sell * executed) / limit.buy - volume;
      }
    }
    if (surplus < 0n) surplus = 0n;
    let charged: bigint;
    if (policy.kind === 'volume') charged = mulFactor(volume, policy.factor);
    else {
      const bySurplus = mulFactor(surplus, policy.factor);
      const cap = mulFactor(volume, policy.maxVolumeFactor);
      charged = bySurplus < cap ? bySurplus : cap;
    }
    protocolFees.push(charged);
    if (order.kind === 'sell') {
      const inSell = (charged * prices.buy) / prices.sell;
      fee += inSell;
      executed -= inSell;
    } else fee += charged;
  }
  if (order.kind === 'sell') return { executed, fee, protocolFees, executedSell: executed + fee, executedBuy: ceilDiv(executed * prices.sell, prices.buy) };
  return { executed, fee, protocolFees, executedSell: (executed * prices.buy) / prices.sell + fee, executedBuy: executed };
}

/**
 * Each policy's fee read back from the executed amounts (§9), in the surplus token, in policy order: policies are
 * visited last to first, each on the trade with the later fees given back, with factors adjusted to an
 * already-charged trade (f/(1−f); volume caps m/(1−m) for sell orders, m/(1+m) for buy orders).
 */
export function feesFromExecution(order: FeeLimitOrder, executedSell: bigint, executedBuy: bigint, policies: readonly FeePolicy[]): bigint[] {
  const fees: bigint[] = new Array(policies.length).fill(0n);
  let later = 0n;
  for (let i = policies.length - 1; i >= 0; i--) {
    const policy = policies[i]!;
    let fee: bigint;
    if (order.kind === 'sell') {
      const receive = executedBuy + later;
      if (policy.kind === 'volume') fee = mulFactor(receive, policy.factor / (1 - policy.factor));
      else {
        const limit = policy.kind === 'priceImprovement' ? quoteAdjustedLimits(order, policy.quote) : { sell: order.sellAmount, buy: order.buyAmount };
        let surplus = receive - ceilDiv(limit.buy * executedSell, limit.sell);
        if (surplus < 0n) surplus = 0n;
        const bySurplus = mulFactor(surplus, policy.factor / (1 - policy.factor));
        const cap = mulFactor(receive, policy.maxVolumeFactor / (1 - policy.maxVolumeFactor));
        fee = bySurplus < cap ? bySurplus : cap;
      }
    } else {
      const pay = executedSell - later;
      if (policy.kind === 'volume') fee = mulFactor(pay, policy.factor / (1 + policy.factor));
      else {
        const limit = policy.kind === 'priceImprovement' ? quoteAdjustedLimits(order, policy.quote) : { sell: order.sellAmount, buy: order.buyAmount };
        let surplus = (limit.sell * executedBuy) / limit.buy - pay;
        if (surplus < 0n) surplus = 0n;
        const bySurplus = mulFactor(surplus, policy.factor / (1 - policy.factor));
        const cap = mulFactor(pay, policy.maxVolumeFactor / (1 + policy.maxVolumeFactor));
        fee = bySurplus < cap ? bySurplus : cap;
      }
    }
    fees[i] = fee;
    later += fee;
  }
  return fees;
}

/**
 * Network + protocol fees of an execution in the sell token (§9): what the trader paid beyond the value of what
 * it received at the uniform prices, executedSell − floor(executedBuy × p_buy / p_sell).
 */
export function feeInSellToken(executedSell: bigint, executedBuy: bigint, prices: { sell: bigint; buy: bigint }): bigint {
  if (prices.sell <= 0n) return 0n;
  const fee = executedSell - (executedBuy * prices.buy) / prices.sell;
  return fee > 0n ? fee : 0n;
}

/** The volume factor in basis points as a decimal string ("2", "0.3"). */
export function factorInBps(factor: number): string {
  const micro = BigInt(Math.round(factor * 1e6)); // 10⁶ precision: 1 bps = 100
  const whole = micro / 100n;
  const frac = (micro % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}

/**
 * A quote answer with the volume fee folded in (§8), the factor at 10⁶ precision: sell quotes
 * buyAmount − floor(buyAmount × f); buy quotes sellAmount + floor((sellAmount + feeAmount) × f).
 */
export function volumeFeeAdjustedQuote(kind: 'sell' | 'buy', amounts: { sellAmount: bigint; buyAmount: bigint; feeAmount: bigint }, factor: number): { sellAmount: bigint; buyAmount: bigint } {
  const micro = BigInt(Math.round(factor * 1e6));
  if (kind === 'sell') return { sellAmount: amounts.sellAmount, buyAmount: amounts.buyAmount - (amounts.buyAmount * micro) / 1_000_000n };
  return { sellAmount: amounts.sellAmount + ((amounts.sellAmount + amounts.feeAmount) * micro) / 1_000_000n, buyAmount: amounts.buyAmount };
}
