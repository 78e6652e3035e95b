/**
 * AMM routing through Uniswap-V2 pools — the direct pair or one connector token — on a local copy of the
 * reserves read at the auction's block. Orders are grouped by directed pair (sell token → buy token; oldest
 * group first) and each group is routed as one aggregate: one `swapExactTokensForTokens` of everything its
 * orders sell, so every order of a directed pair clears at one price (the protocol's uniform directed clearing
 * prices), expressed as a price pair the settlement derives every trade of the group from. Buy orders of a
 * group sell what that price asks for their exact buy amount. By default (`slippageBps` 0) the orders are priced
 * at what the pool yields at the auction's reserves, less a few atoms of rounding, and nothing is kept back from
 * them (issue 19); the swap's minimum out is that yield here, and the engine (`withFeeCushion`) lowers it to what
 * the orders are paid once the driver charges their stated fees: a swap landing first eats into those fees, never
 * into the settlement's buffers, and one that moves the pool further makes the settlement revert.
 * A `slippageBps` above 0 lets the swap's minimum out allow that much slippage, as far as the orders' limits leave
 * room for; the orders are then paid at that minimum and what the pool yields above it stays in the settlement.
 * The settlement approves the router for the total of each token and swaps with itself as
 * recipient, as intra-settlement interactions. A partially fillable order alone in its group is filled as far as
 * its limit price, balance and what is left allow.
 * Orders buying native ETH (0xEeee…) are routed to the wrapped native token, which the settlement unwraps
 * (`withdraw`, the last intra-settlement interaction) so that GPv2Settlement pays their owners in ETH.
 */
import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import type { Auction, SolvableOrder } from './auction-types.js';
import type { ChainClient } from '../chain/client.js';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import { PairDirectory, type PoolSnapshot } from './uniswap-v2-pools.js';
import { BalanceBudget, ceilDiv, executedFeeOf, respectsLimit, type BalanceEffect, type DirectedPrice, type Interaction, type ProposedTrade, type Solution, type Solver } from './solution.js';

export const ROUTER_SWAP_ABI = parseAbi([
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
  'function swapTokensForExactTokens(uint256 amountOut, uint256 amountInMax, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
]);
export const ERC20_APPROVE_ABI = parseAbi(['function approve(address spender, uint256 amount) returns (bool)']);
const WETH_WITHDRAW_ABI = parseAbi(['function withdraw(uint256 amount)']);

export interface AmmRouterOptions {
  client: ChainClient;
  factory: Address;
  router: Address;
  settlement: Address;
  /** intermediate tokens tried as one hop (wrapped native first) */
  connectors: Address[];
  /** the wrapped native token native-ETH buy orders are routed to (none: such orders are not routed) */
  wrappedNative?: Address | null;
  name?: string;
  /** orders routed per settlement at most (bounds its gas) */
  maxTrades?: number;
  /** slippage each swap's minimum out allows, in basis points (default 0: orders get what the pool yields); orders are paid at that minimum */
  slippageBps?: number;
  /** where pool reserves come from (default: the factory's pairs read from the chain at the auction's block) */
  pools?: Pick<PairDirectory, 'snapshot'>;
}

/** One directed pair's aggregate: the trades at one price pair and the swap that funds them. */
interface GroupRoute {
  path: Address[];
  trades: ProposedTrade[];
  /** the price pair every trade is derived from: buy = ceil/floor(sell × sellPrice / buyPrice) */
  sellPrice: bigint;
  buyPrice: bigint;
  amountIn: bigint;
  minOut: bigint;
  /** what the trades pay out in the pool's buy token */
  payout: bigint;
}

/** A member of a group and the amount it is filled by (sell amount of sell orders, buy amount of buy orders). */
interface Fill {
  order: SolvableOrder;
  amount: bigint;
}

const lower = (a: string): Address => a.toLowerCase() as Address;
const BPS = 10_000n;

/**
 * The order in which the router takes candidates (issue 19: not by age alone, which lets old orders that cannot
 * settle crowd out the rest): the most generous limit first — the value of what the order sells over the value of
 * what it asks, at the auction's native prices — then the oldest. Orders of tokens without a price come last.
 */
export function candidateOrder(prices: ReadonlyMap<Address, bigint>, wrappedNative?: Address | null): (x: SolvableOrder, y: SolvableOrder) => number {
  const priceOf = (t: Address) => prices.get(t) ?? (t === BUY_ETH_ADDRESS && wrappedNative ? prices.get(lower(wrappedNative)) : undefined);
  const valued = (o: SolvableOrder): { n: bigint; d: bigint } | null => {
    const ps = priceOf(o.sellToken);
    const pb = priceOf(o.buyToken);
    return ps && pb && o.buyAmount > 0n ? { n: o.sellAmount * ps, d: o.buyAmount * pb } : null;
  };
  return (x, y) => {
    const vx = valued(x);
    const vy = valued(y);
    if (vx && vy) {
      const l = vx.n * vy.d;
      const r = vy.n * vx.d;
      if (l !== r) return l > r ? -1 : 1;
    } else if (vx || vy) return vx ? -1 : 1;
    return x.created - y.created || (x.uid < y.uid ? -1 : 1);
  };
}

export class AmmRouter implements Solver {
  readonly name: string;
  private readonly pairs: Pick<PairDirectory, 'snapshot'>;
  private readonly maxTrades: number;
  private readonly slippageBps: bigint;

  constructor(private readonly options: AmmRouterOptions) {
    this.name = options.name ?? 'amm-router';
    this.pairs = options.pools ?? new PairDirectory(options.client, lower(options.factory));
    this.maxTrades = options.maxTrades ?? 20;
    this.slippageBps = BigInt(options.slippageBps ?? 0);
  }

  /** the token the pools deliver for the order: native ETH comes as the wrapped native token */
  private poolBuyToken(order: SolvableOrder): Address | null {
    if (order.buyToken !== BUY_ETH_ADDRESS) return order.buyToken;
    return this.options.wrappedNative ? lower(this.options.wrappedNative) : null;
  }

  private paths(order: SolvableOrder): Address[][] {
    const buy = this.poolBuyToken(order);
    if (buy === null || buy === order.sellToken) return [];
    const paths: Address[][] = [[order.sellToken, buy]];
    for (const c of this.options.connectors.map(lower)) if (c !== order.sellToken && c !== buy) paths.push([order.sellToken, c, buy]);
    return paths;
  }

  async solve(auction: Auction): Promise<Solution[]> {
    if (auction.orders.length === 0) return [];
    const hops = new Map<string, [Address, Address]>();
    for (const order of auction.orders) for (const path of this.paths(order)) for (let i = 0; i + 1 < path.length; i++) hops.set(`${path[i]}-${path[i + 1]}`, [path[i], path[i + 1]]);
    const pools = await this.pairs.snapshot([...hops.values()], BigInt(auction.block));
    return this.solveOn(auction, pools);
  }

  /** Routes the auction on the given reserves (mutated as the swaps would move them). */
  solveOn(auction: Auction, pools: PoolSnapshot): Solution[] {
    const orders = [...auction.orders].sort(candidateOrder(auction.prices, this.options.wrappedNative));
    const groups = new Map<string, SolvableOrder[]>();
    for (const order of orders) {
      if (this.paths(order).length === 0) continue;
      const key = `${order.sellToken}-${order.buyToken}`;
      groups.set(key, [...(groups.get(key) ?? []), order]);
    }
    const budget = new BalanceBudget();
    const routes: GroupRoute[] = [];
    let count = 0;
    for (const members of groups.values()) {
      if (count >= this.maxTrades) break;
      const route = this.routeGroup(members.slice(0, this.maxTrades - count), pools, budget);
      if (!route) continue;
      pools.applyExactIn(route.path, route.amountIn);
      for (const t of route.trades) budget.take(t.order, t.executedSell + executedFeeOf(t.order, t.executedSell, t.executedBuy));
      routes.push(route);
      count += route.trades.length;
    }
    if (routes.length === 0) return [];
    return [this.solution(routes, auction.timestamp)];
  }

  /**
   * The largest set of the group's orders (oldest kept first) that clears at one price: members whose limit or
   * balance fails at the group's price leave and the rest is priced again (fewer orders, better price).
   */
  private routeGroup(members: SolvableOrder[], pools: PoolSnapshot, budget: BalanceBudget): GroupRoute | null {
    const initial = (order: SolvableOrder): bigint => {
      const left = budget.left(order);
      const full = order.remaining;
      if (!order.partiallyFillable) return full;
      // as far as the balance allows at the order's own limit price (the group's price is at least as good)
      const byBalance = order.kind === 'sell' ? (left * order.sellAmount) / (order.sellAmount + order.feeAmount) : (left * order.buyAmount) / (order.sellAmount + order.feeAmount);
      return full < byBalance ? full : byBalance;
    };
    let fills: Fill[] = members.map((order) => ({ order, amount: initial(order) })).filter((f) => f.amount > 0n);
    while (fills.length > 0) {
      // as much of the slippage allowance as the orders' limits leave room for (down to none)
      let failing = new Set<Hex>();
      for (const slippage of this.slippageSteps()) {
        const best = this.bestPath(fills, pools, slippage);
        if (!best) break;
        failing = new Set(best.trades.filter((t) => !this.acceptable(t, budget)).map((t) => t.order.uid));
        if (failing.size === 0) return best;
      }
      if (fills.length === 1) return this.largestLone(fills[0]!.order, pools, budget);
      if (failing.size === 0) return null;
      fills = fills.filter((f) => !failing.has(f.order.uid));
    }
    return null;
  }

  /** The slippage allowances tried, largest first: the configured one, halved down to a tenth of it, then none. */
  private slippageSteps(): bigint[] {
    const steps: bigint[] = [];
    for (let s = this.slippageBps; s > 0n && s * 10n >= this.slippageBps; s /= 2n) steps.push(s);
    steps.push(0n);
    return steps;
  }

  private bestPath(fills: Fill[], pools: PoolSnapshot, slippage: bigint): GroupRoute | null {
    let best: GroupRoute | null = null;
    for (const path of this.paths(fills[0]!.order)) {
      const r = this.price(fills, path, pools, slippage);
      if (r && (!best || r.sellPrice * best.buyPrice > best.sellPrice * r.buyPrice)) best = r;
    }
    return best;
  }

  private acceptable(t: ProposedTrade, budget: BalanceBudget): boolean {
    return t.executedSell > 0n && t.executedBuy > 0n && respectsLimit(t.order, t.executedSell, t.executedBuy) && t.executedSell + executedFeeOf(t.order, t.executedSell, t.executedBuy) <= budget.left(t.order);
  }

  /** A lone partially fillable order: the largest fill that meets its limit and balance. */
  private largestLone(order: SolvableOrder, pools: PoolSnapshot, budget: BalanceBudget): GroupRoute | null {
    if (!order.partiallyFillable) return null;
    return largestFill(order.remaining, (amount) => {
      for (const slippage of this.slippageSteps()) {
        const r = this.bestPath([{ order, amount }], pools, slippage);
        if (r && this.acceptable(r.trades[0]!, budget)) return r;
      }
      return null;
    });
  }

  /**
   * Prices the fills as one exact-in swap along `path`: sell price = what the swap's minimum out can pay
   * (less a few atoms for rounding), buy price = the amount swapped. Buy orders' sell amounts depend on that
   * amount, so it is found by a few fixed-point steps; the result is checked: everything paid out fits in the
   * minimum out of what the orders bring in.
   */
  private price(fills: Fill[], path: Address[], pools: PoolSnapshot, slippageBps: bigint): GroupRoute | null {
    const sells = fills.filter((f) => f.order.kind === 'sell');
    const buys = fills.filter((f) => f.order.kind === 'buy');
    const sold = sells.reduce((s, f) => s + f.amount, 0n);
    const bought = buys.reduce((s, f) => s + f.amount, 0n);
    const minOutOf = (amountIn: bigint): bigint | null => {
      const out = amountIn > 0n ? pools.amountOut(path, amountIn) : null;
      return out === null ? null : (out * (BPS - slippageBps)) / BPS;
    };
    // The margin (buy-token atoms kept back for rounding) is counted in units of one sell-token atom's worth of the
    // buy token, so that a buy order paying in a coarser token (USDC for WETH: one USDC atom buys ~10⁸ WETH atoms)
    // finds a price whose rounding of its sell amount still funds the swap.
    const probe = sold > 0n ? sold : pools.amountIn(path, bought);
    const probeOut = probe !== null && probe > 0n ? pools.amountOut(path, probe) : null;
    const unit = probe !== null && probeOut !== null && probe > 0n ? ceilDiv(probeOut, probe) : 1n;
    for (let margin = BigInt(2 * fills.length + 2) * unit; margin < (1n << 20n) * unit; margin *= 4n) {
      let x = sold;
      if (bought > 0n) {
        const needed = pools.amountIn(path, bought);
        if (needed === null) return null;
        x += (needed * BPS) / (BPS - slippageBps) + 1n;
      }
      let sellPrice = 0n;
      let buyPrice = 0n;
      let amountIn = 0n;
      for (let i = 0; i < 12; i++) {
        const minOut = minOutOf(x);
        if (minOut === null || minOut <= margin) return null;
        sellPrice = minOut - margin;
        buyPrice = x;
        amountIn = sold + buys.reduce((s, f) => s + (f.amount * buyPrice) / sellPrice, 0n);
        if (amountIn === x) break;
        x = amountIn;
      }
      const trades: ProposedTrade[] = fills.map(({ order, amount }) =>
        order.kind === 'sell' ? { order, executedSell: amount, executedBuy: ceilDiv(amount * sellPrice, buyPrice) } : { order, executedSell: (amount * buyPrice) / sellPrice, executedBuy: amount },
      );
      const payout = trades.reduce((s, t) => s + t.executedBuy, 0n);
      const minOut = minOutOf(amountIn);
      if (minOut !== null && payout <= minOut && amountIn > 0n) return { path, trades, sellPrice, buyPrice, amountIn, minOut, payout };
    }
    return null;
  }

  private solution(routes: GroupRoute[], timestamp: number): Solution {
    const { router, settlement } = this.options;
    // the swap runs inside the settlement, which carries its own deadline: a fixed one keeps the calldata of the
    // same solution the same in every auction (the driver recognises a solution that reverted)
    void timestamp;
    const deadline = 2n ** 32n - 1n;
    const approvals = new Map<Address, bigint>();
    const effects: BalanceEffect[] = [];
    const calls: Interaction[] = [];
    const directedPrices: DirectedPrice[] = [];
    let unwrap = 0n;
    for (const route of routes) {
      const { order } = route.trades[0]!;
      approvals.set(order.sellToken, (approvals.get(order.sellToken) ?? 0n) + route.amountIn);
      effects.push({ token: order.sellToken, delta: -route.amountIn }, { token: route.path[route.path.length - 1]!, delta: route.minOut });
      if (order.buyToken === BUY_ETH_ADDRESS) unwrap += route.payout;
      directedPrices.push({ sellToken: order.sellToken, buyToken: order.buyToken, sellPrice: route.sellPrice, buyPrice: route.buyPrice });
      const callData = encodeFunctionData({ abi: ROUTER_SWAP_ABI, functionName: 'swapExactTokensForTokens', args: [route.amountIn, route.minOut, route.path, settlement, deadline] });
      calls.push({ target: router, value: 0n, callData });
    }
    const approve: Interaction[] = [...approvals].map(([token, amount]) => ({
      target: token,
      value: 0n,
      callData: encodeFunctionData({ abi: ERC20_APPROVE_ABI, functionName: 'approve', args: [router, amount] }),
    }));
    // the unwrap ends the intra-settlement interactions: the payouts (transferOut) come right after them
    const unwraps: Interaction[] = [];
    if (unwrap > 0n) {
      const wrapped = lower(this.options.wrappedNative!);
      unwraps.push({ target: wrapped, value: 0n, callData: encodeFunctionData({ abi: WETH_WITHDRAW_ABI, functionName: 'withdraw', args: [unwrap] }) });
      effects.push({ token: wrapped, delta: -unwrap }, { token: BUY_ETH_ADDRESS, delta: unwrap });
    }
    return {
      solver: this.name,
      trades: routes.flatMap((r) => r.trades),
      clearingPrices: new Map(),
      directedPrices,
      interactions: { pre: [], intra: [...approve, ...calls, ...unwraps], post: [] },
      interactionEffects: effects,
    };
  }
}

/**
 * Binary search for the largest amount in [1, max] that `attempt` accepts (accepted amounts form a prefix).
 * Fills under 1/10,000 of `max` are dust and not worth a settlement.
 */
function largestFill<T>(max: bigint, attempt: (amount: bigint) => T | null): T | null {
  const full = attempt(max);
  if (full) return full;
  // smaller fills only get better prices: if the smallest fill worth having fails, none succeeds
  const dust = max / 10_000n;
  if (dust > 0n && !attempt(dust)) return null;
  let lo = 0n;
  let hi = max;
  let best: T | null = null;
  for (let i = 0; i < 256 && hi - lo > 1n; i++) {
    const mid = (lo + hi) / 2n;
    const r = attempt(mid);
    if (r) {
      best = r;
      lo = mid;
    } else hi = mid;
  }
  return best && lo * 10_000n >= max ? best : null;
}
