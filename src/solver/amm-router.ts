/**
 * AMM routing: each order (oldest first) is routed through Uniswap-V2 pools — the direct pair or one connector
 * token — on a local copy of the reserves read at the auction's block, so orders sharing a pool are priced as
 * the chain will execute them. The settlement contract sells what it received from the owners: it approves the
 * router for the total of each token and calls `swapExactTokensForTokens` (sell orders) or
 * `swapTokensForExactTokens` (buy orders) with itself as recipient, as intra-settlement interactions. Each owner
 * gets exactly what its swap yields; the minimum out (or maximum in) of each swap is that amount, so a pool that
 * moved in between makes the settlement revert instead of paying from the contract's buffers. A partially
 * fillable order is filled as far as its limit price, balance and what is left allow.
 * Orders buying native ETH (0xEeee…) are routed to the wrapped native token, which the settlement unwraps
 * (`withdraw`, the last intra-settlement interaction) so that GPv2Settlement pays their owners in ETH.
 */
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import type { Auction, SolvableOrder } from '../auction/auction-types.js';
import type { ChainClient } from '../chain/client.js';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import { PairDirectory, type PoolSnapshot } from './uniswap-v2-pools.js';
import { BalanceBudget, executedFeeOf, respectsLimit, type BalanceEffect, type Interaction, type ProposedTrade, type Solution, type Solver } from './solution.js';

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
  /** where pool reserves come from (default: the factory's pairs read from the chain at the auction's block) */
  pools?: Pick<PairDirectory, 'snapshot'>;
}

interface Route {
  path: Address[];
  executedSell: bigint;
  executedBuy: bigint;
}

const lower = (a: string): Address => a.toLowerCase() as Address;

export class AmmRouter implements Solver {
  readonly name: string;
  private readonly pairs: Pick<PairDirectory, 'snapshot'>;
  private readonly maxTrades: number;

  constructor(private readonly options: AmmRouterOptions) {
    this.name = options.name ?? 'amm-router';
    this.pairs = options.pools ?? new PairDirectory(options.client, lower(options.factory));
    this.maxTrades = options.maxTrades ?? 20;
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
    const orders = [...auction.orders].sort((x, y) => x.created - y.created || (x.uid < y.uid ? -1 : 1));
    if (orders.length === 0) return [];
    const hops = new Map<string, [Address, Address]>();
    for (const order of orders) for (const path of this.paths(order)) for (let i = 0; i + 1 < path.length; i++) hops.set(`${path[i]}-${path[i + 1]}`, [path[i], path[i + 1]]);
    const pools = await this.pairs.snapshot([...hops.values()], BigInt(auction.block));
    const budget = new BalanceBudget();
    const trades: ProposedTrade[] = [];
    const swaps: Array<{ order: SolvableOrder; route: Route }> = [];
    for (const order of orders) {
      if (trades.length >= this.maxTrades) break;
      const route = this.route(order, pools, budget.left(order));
      if (!route) continue;
      if (order.kind === 'sell') pools.applyExactIn(route.path, route.executedSell);
      else pools.applyExactOut(route.path, route.executedBuy);
      budget.take(order, route.executedSell + executedFeeOf(order, route.executedSell, route.executedBuy));
      trades.push({ order, executedSell: route.executedSell, executedBuy: route.executedBuy });
      swaps.push({ order, route });
    }
    if (trades.length === 0) return [];
    return [this.solution(trades, swaps, auction.timestamp)];
  }

  /** The best route for the order's largest acceptable fill, or null. */
  private route(order: SolvableOrder, pools: PoolSnapshot, balanceLeft: bigint): Route | null {
    const paths = this.paths(order);
    const fee = (sell: bigint, buy: bigint) => executedFeeOf(order, sell, buy);
    if (order.kind === 'sell') {
      const quote = (amountIn: bigint): Route | null => {
        let best: Route | null = null;
        for (const path of paths) {
          const out = pools.amountOut(path, amountIn);
          if (out !== null && (!best || out > best.executedBuy)) best = { path, executedSell: amountIn, executedBuy: out };
        }
        return best;
      };
      const ok = (r: Route | null): r is Route => r !== null && respectsLimit(order, r.executedSell, r.executedBuy) && r.executedSell + fee(r.executedSell, r.executedBuy) <= balanceLeft;
      if (!order.partiallyFillable) {
        const r = quote(order.sellAmount);
        return ok(r) ? r : null;
      }
      // the price only gets worse with size: the largest fill that still meets the limit and the balance
      return largestFill(order.remaining, (amount) => {
        const r = quote(amount);
        return ok(r) ? r : null;
      });
    }
    const quote = (amountOut: bigint): Route | null => {
      let best: Route | null = null;
      for (const path of paths) {
        const amountIn = pools.amountIn(path, amountOut);
        if (amountIn !== null && (!best || amountIn < best.executedSell)) best = { path, executedSell: amountIn, executedBuy: amountOut };
      }
      return best;
    };
    const ok = (r: Route | null): r is Route => r !== null && respectsLimit(order, r.executedSell, r.executedBuy) && r.executedSell + fee(r.executedSell, r.executedBuy) <= balanceLeft;
    if (!order.partiallyFillable) {
      const r = quote(order.buyAmount);
      return ok(r) ? r : null;
    }
    return largestFill(order.remaining, (amount) => {
      const r = quote(amount);
      return ok(r) ? r : null;
    });
  }

  private solution(trades: ProposedTrade[], swaps: Array<{ order: SolvableOrder; route: Route }>, timestamp: number): Solution {
    const { router, settlement } = this.options;
    const deadline = BigInt(timestamp + 3600);
    const approvals = new Map<Address, bigint>();
    const effects: BalanceEffect[] = [];
    const calls: Interaction[] = [];
    let unwrap = 0n;
    for (const { order, route } of swaps) {
      approvals.set(order.sellToken, (approvals.get(order.sellToken) ?? 0n) + route.executedSell);
      effects.push({ token: order.sellToken, delta: -route.executedSell }, { token: route.path[route.path.length - 1]!, delta: route.executedBuy });
      if (order.buyToken === BUY_ETH_ADDRESS) unwrap += route.executedBuy;
      const callData =
        order.kind === 'sell'
          ? encodeFunctionData({ abi: ROUTER_SWAP_ABI, functionName: 'swapExactTokensForTokens', args: [route.executedSell, route.executedBuy, route.path, settlement, deadline] })
          : encodeFunctionData({ abi: ROUTER_SWAP_ABI, functionName: 'swapTokensForExactTokens', args: [route.executedBuy, route.executedSell, route.path, settlement, deadline] });
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
      trades,
      clearingPrices: new Map(),
      interactions: { pre: [], intra: [...approve, ...calls, ...unwraps], post: [] },
      interactionEffects: effects,
    };
  }
}

/**
 * Binary search for the largest amount in [1, max] that `attempt` accepts (accepted amounts form a prefix).
 * Fills under 1/10,000 of `max` are dust and not worth a settlement.
 */
function largestFill(max: bigint, attempt: (amount: bigint) => Route | null): Route | null {
  const full = attempt(max);
  if (full) return full;
  // smaller fills only get better prices: if the smallest fill worth having fails, none succeeds
  const dust = max / 10_000n;
  if (dust > 0n && !attempt(dust)) return null;
  let lo = 0n;
  let hi = max;
  let best: Route | null = null;
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
