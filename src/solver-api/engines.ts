/**
 * The engine side: our built-in solvers as Solver Engine API engines. An engine takes the decoded `Auction`
 * (never our internal one), reads it into the internal shape its algorithm works on (`fromSolverOrder`; the
 * reference prices as native prices; the `constantProduct` liquidity as the pool reserves), and answers wire
 * solutions, each with one uniform clearing price per traded token:
 * - `cow-matcher`: the coincidence-of-wants matcher, its solution with its own clearing prices;
 * - `amm-router`: the AMM router run directed pair by directed pair (most generous limit first) over one copy of the
 *   auction's pools, so each pair's route sees the pools as the earlier routes left them; one solution per pair,
 *   every order of the pair at one price pair (falling back to one solution per order when the aggregate does
 *   not route); the driver merges an engine's solutions over distinct orders, as production does.
 * `EngineService` puts the codec and a concurrency bound in front of an engine: the HTTP routes and the
 * in-process transport both go through it.
 */
import { decodeFunctionData, encodeFunctionData, type Address } from 'viem';
import type { Auction, SolvableOrder } from '../solver/auction-types.js';
import type { ChainClient } from '../chain/client.js';
import { AmmRouter, candidateOrder, ROUTER_SWAP_ABI } from '../solver/amm-router.js';
import { CowMatcher } from '../solver/cow-matcher.js';
import { contractExecution } from '../solver/encode-solution.js';
import { InvalidSolutionError, respectsLimit, verifySolution, type ProposedTrade, type Solution, type Solver } from '../solver/solution.js';
import { BUY_ETH_ADDRESS, chargeFeePolicies } from '../protocol/index.js';
import { PoolSnapshot } from '../solver/uniswap-v2-pools.js';
import { CodecError, decodeAuction, decodeNotification, encodeSolveResponse } from './codec.js';
import { fromSolverOrder } from './orders.js';
import type { SolverAuction, SolverInteraction, SolverSolution, WireNotification } from './schemas.js';

export const BUILT_IN_ENGINES = ['cow-matcher', 'amm-router'] as const;
export type BuiltInEngineName = (typeof BUILT_IN_ENGINES)[number];

export interface SolverEngine {
  readonly name: string;
  /** `stopAt` (epoch ms): answer with what is found by then (the auction's deadline, less a margin) */
  solve(auction: SolverAuction, stopAt?: number): Promise<SolverSolution[]>;
}

/** What an engine of a network needs to know that the auction does not say. */
export interface EngineNetwork {
  chainId: number;
  client: ChainClient;
  settlement: Address;
  amm: { factory: Address; router: Address } | null;
  connectors: Address[];
  wrappedNative: Address | null;
}

const lower = (a: string): Address => a.toLowerCase() as Address;

/** The decoded wire auction as our internal auction (the engine side's view: no block, wall-clock deadline). */
export function internalAuction(auction: SolverAuction, network: Pick<EngineNetwork, 'chainId' | 'settlement'>): Auction {
  const prices = new Map<Address, bigint>();
  for (const [token, info] of Object.entries(auction.tokens)) if (info.referencePrice != null && info.referencePrice > 0n) prices.set(lower(token), info.referencePrice);
  const id = Number(auction.id ?? 0);
  // Our algorithms read `available` as the owner's balance shared by its orders of one sell token; the wire says
  // what each order alone may use, so an owner's orders share the sum of theirs (each one is still bounded by its
  // own amounts): no order is held back by another order of its owner.
  const orders = auction.orders.map(fromSolverOrder);
  const shared = new Map<string, bigint>();
  for (const o of orders) shared.set(`${o.owner}:${o.sellToken}`, (shared.get(`${o.owner}:${o.sellToken}`) ?? 0n) + o.available);
  return {
    chainId: network.chainId,
    id: Number.isSafeInteger(id) ? id : 0,
    block: 0,
    timestamp: Math.floor(Date.parse(auction.deadline) / 1000),
    orders: orders.map((o) => ({ ...o, available: shared.get(`${o.owner}:${o.sellToken}`)! })),
    prices,
    settlement: lower(network.settlement),
  };
}

/** The auction's Uniswap-V2-like pools as the reserves the AMM router prices against. */
export function poolSnapshot(auction: SolverAuction): PoolSnapshot {
  const pools = new Map<string, { address: Address; token0: Address; reserve0: bigint; reserve1: bigint }>();
  for (const l of auction.liquidity) {
    if (l.kind !== 'constantProduct' || l.fee !== '0.003') continue;
    const entries = Object.entries(l.tokens).map(([t, r]) => [lower(t), r.balance] as const);
    if (entries.length !== 2) continue;
    const [[a, ra], [b, rb]] = entries[0][0] < entries[1][0] ? entries : [entries[1], entries[0]];
    if (ra === 0n || rb === 0n) continue; // an empty pool prices nothing (and would divide by zero)
    pools.set(`${a}-${b}`, { address: lower(l.address), token0: a, reserve0: ra, reserve1: rb });
  }
  return new PoolSnapshot(pools as never);
}

/**
 * An internal solution as a wire solution. With clearing prices for every traded token, those prices: the
 * driver derives each trade's other amount from them as GPv2Settlement does (rounding up what sell orders
 * receive, down what buy orders pay), which can differ by an atom from an engine that rounded in the
 * settlement's favour — the solution is kept only if the settlement still pays out no more than it takes in
 * with the contract's amounts. Without clearing prices, a single trade is priced at its own amounts.
 * Null when the solution cannot be said with uniform prices.
 */
export function wireSolution(solution: Solution, id: number, fees: NetworkFees | null = null): SolverSolution | null {
  return pricedSolution(solution, id, fees)?.wire ?? null;
}

/**
 * What the built-in engines charge for gas (issue 23, reference §7): each limit-class trade pays, in its sell
 * token, the gas of settling it × the auction's effective gas price, at the sell token's reference price:
 * floor(gas × gasPrice × 10¹⁸ / price). A trade's gas is the settlement's overhead (upstream's 106 391) plus a
 * transfer in and out, plus its share of the solution's interactions.
 */
export interface NetworkFees {
  gasPrice: bigint;
  /** reference prices (native atoms × 10¹⁸ per token atom) */
  prices: Map<Address, bigint>;
}

export const SETTLEMENT_OVERHEAD_GAS = 106_391n;
export const TRADE_GAS = 60_000n;
export const INTERACTION_GAS = 60_000n;

/** The network fee of one trade of `solution`, in its sell token (0 without a price or gas price). */
export function networkFeeOf(trade: ProposedTrade, solution: Solution, fees: NetworkFees): bigint {
  const price = fees.prices.get(trade.order.sellToken);
  if (!price || fees.gasPrice <= 0n || trade.order.class === 'market') return 0n;
  const interactions = BigInt(solution.interactions.intra.length) * INTERACTION_GAS;
  const gas = SETTLEMENT_OVERHEAD_GAS + TRADE_GAS + interactions / BigInt(Math.max(1, solution.trades.length));
  return (gas * fees.gasPrice * 10n ** 18n) / price;
}

/** The wire solution, and the orders whose limit fails once their network fee and fee policies are charged. */
export function pricedSolution(solution: Solution, id: number, fees: NetworkFees | null): { wire: SolverSolution; failing: Set<string>; payout: bigint } | null {
  const traded = new Set(solution.trades.flatMap((t) => [t.order.sellToken, t.order.buyToken]));
  let prices: Map<Address, bigint> | null = new Map([...solution.clearingPrices].filter(([t]) => traded.has(t)));
  // one directed pair at one price pair (the AMM router's aggregate): those are the solution's uniform prices
  const [directed, ...more] = solution.directedPrices ?? [];
  if (prices.size < traded.size && directed && more.length === 0 && traded.size === 2 && traded.has(directed.sellToken) && traded.has(directed.buyToken)) {
    prices = new Map([
      [directed.sellToken, directed.sellPrice],
      [directed.buyToken, directed.buyPrice],
    ]);
  }
  if (prices.size === traded.size && solution.trades.length > 0) {
    const asContract: ProposedTrade[] = [];
    for (const trade of solution.trades) {
      const exec = contractExecution(trade, prices.get(trade.order.sellToken)!, prices.get(trade.order.buyToken)!);
      if (!exec) return null;
      asContract.push({ order: trade.order, executedSell: exec.sell, executedBuy: exec.buy });
    }
    try {
      verifySolution({ ...solution, trades: asContract });
    } catch (err) {
      if (err instanceof InvalidSolutionError) return null;
      throw err;
    }
  } else {
    if (solution.trades.length !== 1) return null;
    const [t] = solution.trades;
    prices = new Map([
      [t.order.sellToken, t.executedBuy],
      [t.order.buyToken, t.executedSell],
    ]);
  }
  const calls = (list: Solution['interactions']['pre']) => list.map((i) => ({ target: i.target, value: i.value, callData: i.callData }));
  // the interactions' declared balance effects travel with the last one (our engines model them per solution)
  const inputs = solution.interactionEffects.filter((e) => e.delta < 0n).map((e) => ({ token: e.token, amount: -e.delta }));
  const outputs = solution.interactionEffects.filter((e) => e.delta > 0n).map((e) => ({ token: e.token, amount: e.delta }));
  const intra: SolverInteraction[] = solution.interactions.intra.map((i, n, all) => ({
    kind: 'custom',
    internalize: false,
    target: i.target,
    value: i.value,
    callData: i.callData,
    allowances: [],
    inputs: n === all.length - 1 ? inputs : [],
    outputs: n === all.length - 1 ? outputs : [],
  }));
  const failing = new Set<string>();
  const uniform = prices;
  /** what the trades pay out once every fee is charged */
  let payout = 0n;
  const trades = solution.trades.map((t) => {
    const fee = fees ? networkFeeOf(t, solution, fees) : 0n;
    // a sell order's fee is taken out of what it swaps at the uniform prices; a buy order pays it on top
    const executed = t.order.kind === 'sell' ? t.executedSell - fee : t.executedBuy;
    if (fees) {
      const charged = executed > 0n ? chargeFeePolicies({ order: t.order, prices: { sell: uniform.get(t.order.sellToken)!, buy: uniform.get(t.order.buyToken)! }, executed, fee }, t.order.feePolicies) : null;
      if (!charged || charged.executed <= 0n || !respectsLimit(t.order, charged.executedSell, charged.executedBuy)) failing.add(t.order.uid);
      payout += charged?.executedBuy ?? 0n;
    } else payout += t.executedBuy;
    return { kind: 'fulfillment' as const, order: t.order.uid, fee, executedAmount: executed };
  });
  const wire: SolverSolution = {
    id,
    prices: Object.fromEntries(prices),
    trades,
    preInteractions: calls(solution.interactions.pre),
    interactions: intra,
    postInteractions: calls(solution.interactions.post),
  };
  return { wire, failing, payout };
}

/**
 * The AMM router's solution with its swap's minimum out lowered to what the orders are paid once their fees are
 * charged (issue 19): the orders get what the pool yields less their stated fees, and a swap landing first that
 * moves the pool by less than those fees still settles — it is taken from the fees the settlement keeps, never
 * from its buffers; one that moves it more makes the settlement revert. Only a single swap not paying native ETH.
 */
export function withFeeCushion(solution: Solution, fees: NetworkFees, router: Address): Solution {
  const swaps = solution.interactions.intra.filter((i) => i.target.toLowerCase() === router.toLowerCase());
  if (swaps.length !== 1 || solution.trades.some((t) => t.order.buyToken === BUY_ETH_ADDRESS)) return solution;
  const priced = pricedSolution(solution, 0, fees);
  if (!priced || priced.failing.size > 0) return solution;
  const swap = swaps[0]!;
  const decoded = decodeFunctionData({ abi: ROUTER_SWAP_ABI, data: swap.callData });
  if (decoded.functionName !== 'swapExactTokensForTokens') return solution;
  const [amountIn, minOut, path, to, deadline] = decoded.args;
  if (priced.payout <= 0n || priced.payout >= minOut) return solution;
  // the declared effect stays what the pool yields at the auction's reserves; only the swap's floor is lowered
  const callData = encodeFunctionData({ abi: ROUTER_SWAP_ABI, functionName: 'swapExactTokensForTokens', args: [amountIn, priced.payout, path, to, deadline] });
  return {
    ...solution,
    interactions: { ...solution.interactions, intra: solution.interactions.intra.map((i) => (i === swap ? { ...i, callData } : i)) },
  };
}

/** The wire solutions of those whose every trade still holds its limit after its fees. */
function numbered(solutions: Solution[], fees: NetworkFees | null = null): SolverSolution[] {
  const out: SolverSolution[] = [];
  for (const s of solutions) {
    const priced = pricedSolution(s, out.length, fees);
    if (priced && priced.failing.size === 0) out.push(priced.wire);
  }
  return out;
}

/** The auction's gas price and reference prices, what the engines' network fees are computed from. */
export function networkFeesOf(auction: SolverAuction, internal: Auction): NetworkFees {
  return { gasPrice: auction.effectiveGasPrice ?? 0n, prices: internal.prices };
}

/**
 * Solves again without the orders whose limit fails after their fees (an order too small to pay its gas waits,
 * as upstream's engines leave it): at most a few rounds, each without the failing orders of the one before.
 */
async function solveWithinFees(internal: Auction, fees: NetworkFees, solve: (auction: Auction) => Promise<Solution[]>): Promise<Solution[]> {
  let orders = internal.orders;
  let solutions: Solution[] = [];
  for (let round = 0; round < 4 && orders.length > 0; round++) {
    solutions = await solve({ ...internal, orders });
    const failing = new Set<string>();
    for (const s of solutions) for (const uid of pricedSolution(s, 0, fees)?.failing ?? []) failing.add(uid);
    if (failing.size === 0) return solutions;
    orders = orders.filter((o) => !failing.has(o.uid));
  }
  // still some failing: the solutions whose every trade holds (the others are left out on the wire)
  return solutions;
}

/** The CoW matcher behind the API. */
export class CowMatcherEngine implements SolverEngine {
  readonly name = 'cow-matcher';
  private readonly matcher = new CowMatcher();
  constructor(private readonly network: Pick<EngineNetwork, 'chainId' | 'settlement'>) {}

  async solve(auction: SolverAuction, stopAt?: number): Promise<SolverSolution[]> {
    const internal = internalAuction(auction, this.network);
    const fees = networkFeesOf(auction, internal);
    return numbered(await solveWithinFees(internal, fees, (a) => this.matcher.solve(a, stopAt)), fees);
  }
}

/**
 * The AMM router behind the API: one solution per directed pair over the auction's own pools. Within a pair the
 * router routes the aggregate at one price; the wire's uniform prices cannot hold two directions of one pair (fees
 * differ), so pairs are separate solutions, which the driver merges where their prices agree.
 */
export class AmmRouterEngine implements SolverEngine {
  readonly name = 'amm-router';
  constructor(
    private readonly network: EngineNetwork,
    private readonly maxTrades = 20,
  ) {}

  async solve(auction: SolverAuction, stopAt?: number): Promise<SolverSolution[]> {
    const late = () => stopAt !== undefined && Date.now() >= stopAt;
    const amm = this.network.amm;
    if (!amm) return [];
    const internal = internalAuction(auction, this.network);
    const fees = networkFeesOf(auction, internal);
    const snapshot = poolSnapshot(auction);
    const router = new AmmRouter({
      client: this.network.client,
      factory: amm.factory,
      router: amm.router,
      settlement: this.network.settlement,
      connectors: this.network.connectors,
      wrappedNative: this.network.wrappedNative,
      pools: { snapshot: async () => snapshot },
      maxTrades: this.maxTrades,
    });
    // directed pairs, the most generous limit first, then the oldest (not by age alone: candidateOrder)
    const byPair = new Map<string, SolvableOrder[]>();
    const orders = [...internal.orders].sort(candidateOrder(internal.prices, this.network.wrappedNative));
    for (const order of orders) {
      const key = `${order.sellToken.toLowerCase()}>${order.buyToken.toLowerCase()}`;
      byPair.set(key, [...(byPair.get(key) ?? []), order]);
    }
    // Each wire order's amounts are what the driver found funded for that order alone (the API carries no owner
    // balances): orders are routed independently of their owners' other orders. An owner whose orders together
    // overdraw its balance makes the merged solution revert in the driver's simulation, which then finds the order.
    const solutions: Solution[] = [];
    let trades = 0;
    const take = (solution: Solution) => {
      trades += solution.trades.length;
      solutions.push(withFeeCushion(solution, fees, amm.router.toLowerCase() as Address));
    };
    const holds = (s: Solution | undefined): s is Solution => {
      const priced = s && s.trades.length > 0 ? pricedSolution(s, 0, fees) : null;
      return priced !== null && priced.failing.size === 0;
    };
    for (const group of byPair.values()) {
      if (trades >= this.maxTrades || late()) break;
      // orders whose limit fails after their network fee and fee policies are left out (they wait, open)
      const [aggregate] = await solveWithinFees({ ...internal, orders: group.slice(0, this.maxTrades - trades) }, fees, (a) => router.solve(a));
      if (holds(aggregate)) {
        take(aggregate);
        continue;
      }
      // the aggregate did not route or cannot go on the wire: each order on its own, as far as the pool allows
      for (const order of group) {
        if (trades >= this.maxTrades || late()) break;
        const [alone] = await router.solve({ ...internal, orders: [order] });
        if (holds(alone) && alone.trades.length === 1) take(alone);
      }
    }
    return numbered(solutions, fees);
  }
}

/** An internal `Solver` (any algorithm over our auction type) behind the API: for tests and custom engines. */
export class InternalSolverEngine implements SolverEngine {
  constructor(
    private readonly solver: Solver,
    private readonly network: Pick<EngineNetwork, 'chainId' | 'settlement'>,
  ) {}
  get name(): string {
    return this.solver.name;
  }
  async solve(auction: SolverAuction): Promise<SolverSolution[]> {
    const internal = internalAuction(auction, this.network);
    return numbered(await this.solver.solve(internal), networkFeesOf(auction, internal));
  }
}

export function builtInEngine(name: BuiltInEngineName, network: EngineNetwork): SolverEngine {
  return name === 'cow-matcher' ? new CowMatcherEngine(network) : new AmmRouterEngine(network);
}

export class EngineBusyError extends Error {
  constructor(name: string) {
    super(`${name}: too many auctions at once`);
    this.name = 'EngineBusyError';
  }
}

/** The most an auction from an outside caller may hold (issue 19): beyond these it is refused with 400. */
export interface AuctionLimits {
  orders: number;
  tokens: number;
  liquidity: number;
}

export const AUCTION_LIMITS: AuctionLimits = { orders: 5_000, tokens: 10_000, liquidity: 5_000 };

/** CodecError when the parsed auction holds more than `limits` allow (checked before it is decoded). */
export function checkAuctionLimits(value: unknown, limits: AuctionLimits): void {
  if (typeof value !== 'object' || value === null) return; // the codec names what is wrong
  const v = value as { orders?: unknown; tokens?: unknown; liquidity?: unknown };
  const over = (what: string, n: number, max: number) => {
    if (n > max) throw new CodecError(`auction.${what}: ${n} entries, at most ${max} are accepted`);
  };
  if (Array.isArray(v.orders)) over('orders', v.orders.length, limits.orders);
  if (Array.isArray(v.liquidity)) over('liquidity', v.liquidity.length, limits.liquidity);
  if (typeof v.tokens === 'object' && v.tokens !== null) {
    let n = 0;
    for (const _ in v.tokens) if (++n > limits.tokens) over('tokens', n, limits.tokens);
  }
}

/** When an engine stops looking for more (epoch ms): a margin before the deadline, for encoding and the way back. */
export function stopTimeOf(deadline: number, now: number): number {
  return deadline - Math.min(500, Math.max(0, deadline - now) / 5);
}

/**
 * One `/solve` body through an engine: JSON text (or a parsed value) → limits → decoded auction → `onDeadline`
 * told the auction's deadline → solutions found by the stop time → the `{solutions}` JSON text. CodecError when
 * the body is malformed or over the limits. Runs wherever it is called (a worker thread for the built-ins).
 */
export async function solveBody(engine: SolverEngine, body: unknown, options: { limits?: AuctionLimits | null; onDeadline?: (deadline: number) => void } = {}): Promise<string> {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch (err) {
      throw new CodecError(`auction: malformed JSON (${(err as Error).message})`);
    }
  }
  if (options.limits) checkAuctionLimits(value, options.limits);
  const auction = decodeAuction(value);
  const deadline = Date.parse(auction.deadline);
  options.onDeadline?.(deadline);
  const solutions = await engine.solve(auction, stopTimeOf(deadline, Date.now()));
  return JSON.stringify(encodeSolveResponse({ solutions }));
}

/** An engine that takes the `/solve` body itself (the built-ins on worker threads: `engine-threads.ts`). */
export interface BodySolver {
  readonly name: string;
  /** resolves with the `{solutions}` JSON text; CodecError when the body is malformed or over the limits */
  solveBody(body: unknown, limits: AuctionLimits | null): Promise<string>;
  close(): Promise<void>;
}

/** The codec, the limits and a bound on concurrent auctions in front of an engine. */
export class EngineService {
  private active = 0;
  readonly notifications: WireNotification[] = [];

  constructor(
    readonly engine: SolverEngine | BodySolver,
    /** auctions solved at once; one more is refused with EngineBusyError (HTTP 429) before its body is read */
    private readonly maxConcurrent = 2,
  ) {}

  get name(): string {
    return this.engine.name;
  }

  /**
   * A `/solve` body (JSON text or value) → the `{solutions}` JSON text. CodecError when malformed or (with
   * `limits`, for outside callers) too large; EngineBusyError past the concurrency bound.
   */
  async solve(body: unknown, limits: AuctionLimits | null = null): Promise<string> {
    if (this.active >= this.maxConcurrent) throw new EngineBusyError(this.engine.name);
    this.active++;
    try {
      if ('solveBody' in this.engine) return await this.engine.solveBody(body, limits);
      return await solveBody(this.engine, body, { limits });
    } finally {
      this.active--;
    }
  }

  /** `/notify` body: checked and kept (the last 100). */
  notify(body: unknown): WireNotification {
    const n = decodeNotification(body);
    this.notifications.push(n);
    if (this.notifications.length > 100) this.notifications.shift();
    return n;
  }

  /** Ends the engine's threads, if it has any. */
  async close(): Promise<void> {
    if ('solveBody' in this.engine) await this.engine.close();
  }
}
