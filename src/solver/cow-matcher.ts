/**
 * Coincidence of wants: orders on opposite sides of a token pair settled against each other at one uniform
 * clearing price, without any AMM. Per pair, the most generous orders of each side are combined (prefixes of
 * each side sorted by limit price) at a few candidate prices (the marginal limits, the price that balances the
 * full amounts, the market price from the auction's native prices); fill-or-kill orders trade in full,
 * partially fillable ones absorb the difference. Amounts are rounded in the settlement's favour, so it never
 * pays out more of a token than it takes in. The best match of each pair is kept; matches of several pairs are
 * combined while their token graph stays a forest, so that one price vector fits all of them.
 */
import type { Address } from 'viem';
import type { Auction, SolvableOrder } from './auction-types.js';
import { InvalidSolutionError, ceilDiv, executedFeeOf, scoreSolution, verifySolution, type ProposedTrade, type Solution, type Solver } from './solution.js';

/** A price as a fraction n/d (d > 0). */
interface Fraction {
  n: bigint;
  d: bigint;
}

const less = (x: Fraction, y: Fraction): boolean => x.n * y.d < y.n * x.d;

interface Candidate {
  order: SolvableOrder;
  /** 'A' sells the pair's token a for b; 'B' sells b for a */
  side: 'A' | 'B';
  /** limit in b per a: the least an A order accepts, the most a B order pays */
  rate: Fraction;
  /** largest fill in order units (sell amount for sell orders, buy amount for buy orders) */
  cap: bigint;
}

interface PairMatch {
  a: Address;
  b: Address;
  /** price of a and of b (amount_b = amount_a × pa / pb) */
  pa: bigint;
  pb: bigint;
  trades: ProposedTrade[];
  score: bigint;
}

export interface CowMatcherOptions {
  name?: string;
  /** orders considered per side of a pair (the most generous ones) */
  ordersPerSide?: number;
}

const gcd = (x: bigint, y: bigint): bigint => {
  while (y !== 0n) [x, y] = [y, x % y];
  return x < 0n ? -x : x;
};

/** Largest fill an order may get, in its own units: what is left, and for sell-side amounts what the owner holds. */
function capOf(order: SolvableOrder): bigint {
  if (!order.partiallyFillable) return order.kind === 'sell' ? order.sellAmount : order.buyAmount;
  if (order.kind === 'buy') {
    // at worst it pays its limit price: buy × sellAmount / buyAmount (+ fee) must fit the balance
    const byBalance = (order.available * order.buyAmount) / (order.sellAmount + order.feeAmount);
    return byBalance < order.remaining ? byBalance : order.remaining;
  }
  // x + fee(x) ≤ available, fee(x) = feeAmount × x / sellAmount
  const byBalance = order.feeAmount === 0n ? order.available : (order.available * order.sellAmount) / (order.sellAmount + order.feeAmount);
  return byBalance < order.remaining ? byBalance : order.remaining;
}

export class CowMatcher implements Solver {
  readonly name: string;
  private readonly perSide: number;

  constructor(options: CowMatcherOptions = {}) {
    this.name = options.name ?? 'cow-matcher';
    this.perSide = options.ordersPerSide ?? 24;
  }

  /** `stopAt` (epoch ms): pairs not matched by then are left out, the ones matched still answer. */
  async solve(auction: Auction, stopAt?: number): Promise<Solution[]> {
    const pairs = new Map<string, { a: Address; b: Address; A: Candidate[]; B: Candidate[] }>();
    for (const order of auction.orders) {
      const cap = capOf(order);
      if (cap <= 0n || order.sellToken === order.buyToken) continue;
      const [a, b] = order.sellToken < order.buyToken ? [order.sellToken, order.buyToken] : [order.buyToken, order.sellToken];
      const k = `${a}-${b}`;
      let pair = pairs.get(k);
      if (!pair) pairs.set(k, (pair = { a, b, A: [], B: [] }));
      if (order.sellToken === a) pair.A.push({ order, side: 'A', rate: { n: order.buyAmount, d: order.sellAmount }, cap });
      else pair.B.push({ order, side: 'B', rate: { n: order.sellAmount, d: order.buyAmount }, cap });
    }
    const matches: PairMatch[] = [];
    for (const pair of pairs.values()) {
      if (stopAt !== undefined && Date.now() >= stopAt) break;
      if (pair.A.length === 0 || pair.B.length === 0) continue;
      const best = this.matchPair(pair.a, pair.b, pair.A, pair.B, auction.prices);
      if (best) matches.push(best);
    }
    if (matches.length === 0) return [];
    return this.combine(matches);
  }

  private matchPair(a: Address, b: Address, sideA: Candidate[], sideB: Candidate[], prices: Map<Address, bigint>): PairMatch | null {
    // most generous first: A by lowest acceptable rate, B by highest rate it pays
    const A = [...sideA].sort((x, y) => (less(x.rate, y.rate) ? -1 : less(y.rate, x.rate) ? 1 : 0)).slice(0, this.perSide);
    const B = [...sideB].sort((x, y) => (less(y.rate, x.rate) ? -1 : less(x.rate, y.rate) ? 1 : 0)).slice(0, this.perSide);
    const market: Fraction | null = prices.get(a) && prices.get(b) ? { n: prices.get(a)!, d: prices.get(b)! } : null;
    let best: PairMatch | null = null;
    for (let i = 1; i <= A.length; i++) {
      const lo = A[i - 1].rate;
      for (let j = 1; j <= B.length; j++) {
        const hi = B[j - 1].rate;
        if (less(hi, lo)) break; // B's limits only get tighter
        const chosen = [...A.slice(0, i), ...B.slice(0, j)];
        const candidates: Fraction[] = [lo, hi];
        const balancing = balancingPrice(chosen);
        if (balancing && !less(balancing, lo) && !less(hi, balancing)) candidates.push(balancing);
        if (market && !less(market, lo) && !less(hi, market)) candidates.push(market);
        for (const p of candidates) {
          const match = this.evaluate(a, b, chosen, p, prices);
          if (match && (!best || match.score > best.score)) best = match;
        }
      }
    }
    return best;
  }

  /** Fills every fill-or-kill order in full and the partially fillable ones as far as balance needs, at p (b per a). */
  private evaluate(a: Address, b: Address, chosen: Candidate[], price: Fraction, prices: Map<Address, bigint>): PairMatch | null {
    const divisor = gcd(price.n, price.d);
    const N = price.n / divisor;
    const D = price.d / divisor;
    if (N <= 0n || D <= 0n) return null;
    // a-side value of each order's fill, scaled by N so that it stays an integer
    const value = (c: Candidate, amount: bigint): bigint => {
      const buysOrSellsA = (c.side === 'A' && c.order.kind === 'sell') || (c.side === 'B' && c.order.kind === 'buy');
      return buysOrSellsA ? amount * N : amount * D;
    };
    const fromValue = (c: Candidate, v: bigint): bigint => {
      const buysOrSellsA = (c.side === 'A' && c.order.kind === 'sell') || (c.side === 'B' && c.order.kind === 'buy');
      return buysOrSellsA ? v / N : v / D;
    };
    let fixedA = 0n;
    let flexA = 0n;
    let fixedB = 0n;
    let flexB = 0n;
    for (const c of chosen) {
      const v = value(c, c.cap);
      if (c.side === 'A') c.order.partiallyFillable ? (flexA += v) : (fixedA += v);
      else c.order.partiallyFillable ? (flexB += v) : (fixedB += v);
    }
    const volume = fixedA + flexA < fixedB + flexB ? fixedA + flexA : fixedB + flexB;
    if (volume < fixedA || volume < fixedB || volume === 0n) return null;
    // fills in order units; partially fillable orders take what the other side needs, most generous first
    const fills = new Map<Candidate, bigint>();
    let needA = volume - fixedA;
    let needB = volume - fixedB;
    for (const c of chosen) {
      if (!c.order.partiallyFillable) {
        fills.set(c, c.cap);
        continue;
      }
      const need = c.side === 'A' ? needA : needB;
      const v = need < value(c, c.cap) ? need : value(c, c.cap);
      const amount = fromValue(c, v);
      if (c.side === 'A') needA -= v;
      else needB -= v;
      if (amount > 0n) fills.set(c, amount);
    }
    const toTrades = (): ProposedTrade[] => {
      const trades: ProposedTrade[] = [];
      for (const [c, amount] of fills) {
        if (amount <= 0n) continue;
        const { order } = c;
        // amount_b = amount_a × N / D, rounded as GPv2Settlement rounds at prices (a: N, b: D): what a sell order
        // receives up, what a buy order pays down (the deficit check below keeps the settlement whole)
        if (c.side === 'A') {
          if (order.kind === 'sell') trades.push({ order, executedSell: amount, executedBuy: ceilDiv(amount * N, D) });
          else trades.push({ order, executedBuy: amount, executedSell: (amount * D) / N });
        } else if (order.kind === 'sell') trades.push({ order, executedSell: amount, executedBuy: ceilDiv(amount * D, N) });
        else trades.push({ order, executedBuy: amount, executedSell: (amount * N) / D });
      }
      return trades;
    };
    // rounding can leave the settlement a few atoms short: trim a partially fillable fill of the receiving side
    for (let attempt = 0; attempt < 6; attempt++) {
      const trades = toTrades();
      const deficit = netDeficit(trades);
      if (!deficit) {
        const solution: Solution = { solver: this.name, trades, clearingPrices: new Map([[a, N], [b, D]]), interactions: { pre: [], intra: [], post: [] }, interactionEffects: [] };
        try {
          verifySolution(solution);
        } catch (err) {
          if (err instanceof InvalidSolutionError) return null;
          throw err;
        }
        return { a, b, pa: N, pb: D, trades, score: scoreSolution(solution, prices) };
      }
      const receivers = [...fills.keys()].filter((c) => c.order.partiallyFillable && c.order.buyToken === deficit.token && (fills.get(c) ?? 0n) > 0n);
      if (receivers.length === 0) return null;
      const victim = receivers.reduce((x, y) => ((fills.get(x) ?? 0n) >= (fills.get(y) ?? 0n) ? x : y));
      const current = fills.get(victim)!;
      // the received token per unit of fill is at most max(N/D, D/N): cut enough to cover the deficit
      const step = victim.order.kind === 'buy' ? deficit.amount : ceilDiv(deficit.amount * (N > D ? N : D), N < D ? N : D) + 1n;
      fills.set(victim, current > step ? current - step : 0n);
    }
    return null;
  }

  /**
   * Solutions from the pair matches, best first: each takes the best remaining matches whose tokens form a forest
   * with one consistent price vector small enough for the settlement's arithmetic (GPv2Settlement multiplies
   * amounts by prices in uint256: the prices of a forest are products of its pairs' prices, so a large forest
   * overflows); the matches left over form the next solution (at most four).
   */
  private combine(matches: PairMatch[]): Solution[] {
    matches.sort((x, y) => (x.score > y.score ? -1 : x.score < y.score ? 1 : 0));
    const solutions: Solution[] = [];
    let rest = matches;
    while (rest.length > 0 && solutions.length < 4) {
      const kept: PairMatch[] = [];
      const skipped: PairMatch[] = [];
      const parent = new Map<Address, Address>();
      const find = (t: Address): Address => {
        while (parent.has(t) && parent.get(t) !== t) t = parent.get(t)!;
        return t;
      };
      for (const m of rest) {
        const closesCycle = parent.has(m.a) && parent.has(m.b) && find(m.a) === find(m.b);
        if (closesCycle || (kept.length > 0 && !fitsSettlementArithmetic([...kept, m]))) {
          skipped.push(m);
          continue;
        }
        parent.set(m.a, parent.get(m.a) ?? m.a);
        parent.set(m.b, parent.get(m.b) ?? m.b);
        parent.set(find(m.a), find(m.b));
        kept.push(m);
      }
      solutions.push(this.solutionOf(kept));
      rest = skipped;
    }
    return solutions;
  }

  private solutionOf(kept: PairMatch[]): Solution {
    const solution: Solution = {
      solver: this.name,
      trades: kept.flatMap((m) => m.trades),
      clearingPrices: forestPrices(kept),
      interactions: { pre: [], intra: [], post: [] },
      interactionEffects: [],
    };
    try {
      verifySolution(solution); // an owner may sell one token in two pairs: then only the best pair trades
      return solution;
    } catch (err) {
      if (!(err instanceof InvalidSolutionError)) throw err;
      const best = kept[0];
      return { ...solution, trades: best.trades, clearingPrices: new Map([[best.a, best.pa], [best.b, best.pb]]) };
    }
  }
}

const UINT256_LIMIT = 1n << 256n;

/** Whether every amount of the matches' orders times every price of their forest stays within uint256. */
function fitsSettlementArithmetic(matches: PairMatch[]): boolean {
  let price = 0n;
  for (const p of forestPrices(matches).values()) if (p > price) price = p;
  let amount = 0n;
  for (const m of matches) {
    for (const t of m.trades) {
      for (const v of [t.order.sellAmount, t.order.buyAmount, t.executedSell, t.executedBuy]) if (v > amount) amount = v;
    }
  }
  return price * amount < UINT256_LIMIT;
}

/** The price at which every chosen order trading in full balances: p = (Σ b sold − Σ b bought by buy orders) / (Σ a sold − Σ a bought). */
function balancingPrice(chosen: Candidate[]): Fraction | null {
  let bIn = 0n; // b sold by B sell orders
  let bOutFixed = 0n; // b bought by A buy orders
  let aIn = 0n; // a sold by A sell orders
  let aOutFixed = 0n; // a bought by B buy orders
  for (const c of chosen) {
    if (c.side === 'A') c.order.kind === 'sell' ? (aIn += c.cap) : (bOutFixed += c.cap);
    else c.order.kind === 'sell' ? (bIn += c.cap) : (aOutFixed += c.cap);
  }
  const n = bIn - bOutFixed;
  const d = aIn - aOutFixed;
  return n > 0n && d > 0n ? { n, d } : null;
}

/** The first token whose payouts exceed what the trades bring in, and by how much. */
function netDeficit(trades: ProposedTrade[]): { token: Address; amount: bigint } | null {
  const net = new Map<Address, bigint>();
  for (const t of trades) {
    net.set(t.order.sellToken, (net.get(t.order.sellToken) ?? 0n) + t.executedSell + executedFeeOf(t.order, t.executedSell, t.executedBuy));
    net.set(t.order.buyToken, (net.get(t.order.buyToken) ?? 0n) - t.executedBuy);
  }
  for (const [token, amount] of net) if (amount < 0n) return { token, amount: -amount };
  return null;
}

/** Integer prices for the tokens of a forest of pair prices (pa/pb per edge), reduced by their gcd. */
function forestPrices(matches: PairMatch[]): Map<Address, bigint> {
  const edges = new Map<Address, Array<{ to: Address; num: bigint; den: bigint }>>();
  const link = (from: Address, to: Address, num: bigint, den: bigint) => {
    const list = edges.get(from) ?? [];
    list.push({ to, num, den });
    edges.set(from, list);
  };
  for (const m of matches) {
    // price(b) = price(a) × pb / pa
    link(m.a, m.b, m.pb, m.pa);
    link(m.b, m.a, m.pa, m.pb);
  }
  const prices = new Map<Address, { n: bigint; d: bigint }>();
  for (const root of edges.keys()) {
    if (prices.has(root)) continue;
    prices.set(root, { n: 1n, d: 1n });
    const queue = [root];
    while (queue.length > 0) {
      const at = queue.shift()!;
      const p = prices.get(at)!;
      for (const e of edges.get(at) ?? []) {
        if (prices.has(e.to)) continue;
        const n = p.n * e.num;
        const d = p.d * e.den;
        const g = gcd(n, d);
        prices.set(e.to, { n: n / g, d: d / g });
        queue.push(e.to);
      }
    }
  }
  // common denominator, then reduce
  let lcm = 1n;
  for (const { d } of prices.values()) lcm = (lcm / gcd(lcm, d)) * d;
  const scaled = new Map([...prices].map(([t, { n, d }]) => [t, (n * lcm) / d]));
  let g = 0n;
  for (const v of scaled.values()) g = gcd(g, v);
  return new Map([...scaled].map(([t, v]) => [t, g > 0n ? v / g : v]));
}
