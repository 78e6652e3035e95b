// The devnet's synthetic market, as pure functions: a seeded random generator, a latent "reference" USD price
// per asset that follows a slowly mean-reverting random walk, and the swaps that keep the Uniswap v2 pools
// near those references (arbitrage) plus small random "retail" swaps that push them around.
// Used by the history replay (deterministic, precomputed) and by the live market bot.
import type { Address } from 'viem';

// ---------------------------------------------------------------------------------------------------------
// Random numbers

/** A uniform generator on [0, 1). */
export type Rng = () => number;

/** sfc32 seeded through splitmix32: fast, deterministic for a given seed, good enough for simulations. */
export function createRng(seed: number): Rng {
  let s = seed >>> 0;
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** A standard normal sample (Box–Muller). */
export function gaussian(rng: Rng): number {
  let u = rng();
  while (u <= Number.EPSILON) u = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

/** Exponentially distributed waiting time with the given mean. */
export function exponential(rng: Rng, mean: number): number {
  let u = rng();
  while (u <= Number.EPSILON) u = rng();
  return -Math.log(u) * mean;
}

// ---------------------------------------------------------------------------------------------------------
// Reference prices

export interface AssetModel {
  /** Price the walk reverts to, and the price pools are seeded at. */
  anchorUsd: number;
  /** Standard deviation of the log-price move over 5 minutes (0.0012 = 12 bp). */
  volatility5m: number;
  /** Fraction of the log distance to the anchor removed per 5 minutes. */
  meanReversion5m: number;
  /** Loading on the common market factor, in [0, 1]. */
  marketBeta: number;
}

/** Seed prices and walk parameters, by token symbol. USDC is the numeraire and stays at 1. */
export const DEVNET_ASSETS: Readonly<Record<string, AssetModel>> = {
  WETH: { anchorUsd: 3000, volatility5m: 0.0012, meanReversion5m: 0.0005, marketBeta: 0.8 },
  WBTC: { anchorUsd: 60000, volatility5m: 0.001, meanReversion5m: 0.0005, marketBeta: 0.8 },
  COW: { anchorUsd: 0.5, volatility5m: 0.0025, meanReversion5m: 0.0008, marketBeta: 0.6 },
  DAI: { anchorUsd: 1, volatility5m: 0.0001, meanReversion5m: 0.05, marketBeta: 0 },
  USDC: { anchorUsd: 1, volatility5m: 0, meanReversion5m: 0, marketBeta: 0 },
};

export type ReferencePrices = Record<string, number>;

export function anchorPrices(assets: Readonly<Record<string, AssetModel>> = DEVNET_ASSETS): ReferencePrices {
  return Object.fromEntries(Object.entries(assets).map(([s, a]) => [s, a.anchorUsd]));
}

/** Advances every reference price by `dtSeconds` (an Ornstein–Uhlenbeck step in log space). */
export function stepReferencePrices(
  prices: ReferencePrices,
  dtSeconds: number,
  rng: Rng,
  assets: Readonly<Record<string, AssetModel>> = DEVNET_ASSETS,
): ReferencePrices {
  const steps = Math.max(0, dtSeconds) / 300;
  const market = gaussian(rng);
  const next: ReferencePrices = { ...prices };
  for (const [symbol, model] of Object.entries(assets)) {
    const current = prices[symbol] ?? model.anchorUsd;
    if (model.volatility5m === 0 && model.meanReversion5m === 0) {
      next[symbol] = current;
      continue;
    }
    const idio = gaussian(rng);
    const shock = model.marketBeta * market + Math.sqrt(1 - model.marketBeta ** 2) * idio;
    const pull = 1 - (1 - model.meanReversion5m) ** steps;
    const logDev = Math.log(current / model.anchorUsd);
    const logNext = logDev * (1 - pull) + model.volatility5m * Math.sqrt(steps) * shock;
    next[symbol] = model.anchorUsd * Math.exp(logNext);
  }
  return next;
}

// ---------------------------------------------------------------------------------------------------------
// Pools and swaps

export interface PoolToken {
  address: Address;
  symbol: string;
  decimals: number;
}

export interface PoolState {
  address: Address;
  token0: PoolToken;
  token1: PoolToken;
  reserve0: bigint;
  reserve1: bigint;
}

export interface PlannedSwap {
  pool: Address;
  tokenIn: Address;
  tokenOut: Address;
  amountIn: bigint;
  /** Output computed from the reserves the plan was made with. */
  expectedOut: bigint;
  kind: 'arbitrage' | 'retail';
}

/** Uniswap v2 output for an exact input (0.3 % fee), exactly as UniswapV2Library.getAmountOut. */
export function getAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  if (amountIn <= 0n || reserveIn <= 0n || reserveOut <= 0n) return 0n;
  const withFee = amountIn * 997n;
  return (withFee * reserveOut) / (reserveIn * 1000n + withFee);
}

/** Pool price of token0 in units of token1 (decimal-adjusted). */
export function poolPrice(pool: PoolState): number {
  const r0 = Number(pool.reserve0) / 10 ** pool.token0.decimals;
  const r1 = Number(pool.reserve1) / 10 ** pool.token1.decimals;
  return r1 / r0;
}

/** USD value of one side of the pool at the reference prices. */
export function poolDepthUsd(pool: PoolState, prices: ReferencePrices): number {
  return (Number(pool.reserve0) / 10 ** pool.token0.decimals) * (prices[pool.token0.symbol] ?? 0);
}

export function applySwap(pool: PoolState, swap: PlannedSwap): PoolState {
  const zeroIn = swap.tokenIn.toLowerCase() === pool.token0.address.toLowerCase();
  const [rIn, rOut] = zeroIn ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0];
  const out = getAmountOut(swap.amountIn, rIn, rOut);
  return zeroIn
    ? { ...pool, reserve0: pool.reserve0 + swap.amountIn, reserve1: pool.reserve1 - out }
    : { ...pool, reserve0: pool.reserve0 - out, reserve1: pool.reserve1 + swap.amountIn };
}

function swapIn(pool: PoolState, zeroIn: boolean, amountIn: bigint, kind: PlannedSwap['kind']): PlannedSwap {
  const [tIn, tOut, rIn, rOut] = zeroIn
    ? [pool.token0, pool.token1, pool.reserve0, pool.reserve1]
    : [pool.token1, pool.token0, pool.reserve1, pool.reserve0];
  return { pool: pool.address, tokenIn: tIn.address, tokenOut: tOut.address, amountIn, expectedOut: getAmountOut(amountIn, rIn, rOut), kind };
}

/**
 * The swap that moves the pool's price `fraction` of the way (in log terms) to `targetPrice` (token0 in token1),
 * or null if the needed input is worth less than `minUsd`.
 */
export function planSwapToPrice(
  pool: PoolState,
  targetPrice: number,
  fraction: number,
  prices: ReferencePrices,
  minUsd = 1,
): PlannedSwap | null {
  const current = poolPrice(pool);
  if (!(current > 0) || !(targetPrice > 0)) return null;
  const goal = current * Math.exp(Math.log(targetPrice / current) * Math.min(1, Math.max(0, fraction)));
  const r0 = Number(pool.reserve0);
  const r1 = Number(pool.reserve1);
  const k = r0 * r1;
  // Raw price: raw token1 per raw token0.
  const rawGoal = goal * 10 ** (pool.token1.decimals - pool.token0.decimals);
  const r0Goal = Math.sqrt(k / rawGoal);
  const r1Goal = k / r0Goal;
  let zeroIn: boolean;
  let needed: number;
  if (r0Goal > r0) {
    zeroIn = true; // token0 too expensive in the pool: sell token0 into it
    needed = (r0Goal - r0) / 0.997;
  } else {
    zeroIn = false;
    needed = (r1Goal - r1) / 0.997;
  }
  if (!(needed > 0) || !Number.isFinite(needed)) return null;
  const tokenIn = zeroIn ? pool.token0 : pool.token1;
  const usd = (needed / 10 ** tokenIn.decimals) * (prices[tokenIn.symbol] ?? 0);
  if (usd < minUsd) return null;
  return swapIn(pool, zeroIn, BigInt(Math.floor(needed)), 'arbitrage');
}

export interface MarketStepOptions {
  /** Chance that a pool gets an arbitrage swap toward the reference prices in this step. */
  arbitrageProbability: number;
  /** Number of retail swaps, drawn uniformly from [min, max]. */
  retailSwaps: [number, number];
  /** Retail swap size as a fraction of the input reserve, log-uniform between these. */
  retailFraction: [number, number];
  /** Per-pool noise on the arbitrage target (log-price standard deviation). */
  targetNoise: number;
  /** Arbitrage swaps below this USD value are skipped. */
  minArbitrageUsd: number;
}

export const HISTORY_STEP: MarketStepOptions = {
  arbitrageProbability: 0.5,
  retailSwaps: [1, 3],
  retailFraction: [3e-5, 2e-3],
  targetNoise: 0.0003,
  minArbitrageUsd: 20,
};

/** A random retail swap on the pool: random direction, size a log-uniform fraction of the input reserve. */
export function planRetailSwap(pool: PoolState, rng: Rng, fractionRange: [number, number]): PlannedSwap {
  const zeroIn = rng() < 0.5;
  const [lo, hi] = fractionRange;
  const fraction = Math.exp(Math.log(lo) + rng() * (Math.log(hi) - Math.log(lo)));
  const reserveIn = zeroIn ? pool.reserve0 : pool.reserve1;
  const amountIn = BigInt(Math.max(1, Math.floor(Number(reserveIn) * fraction)));
  return swapIn(pool, zeroIn, amountIn, 'retail');
}

/** Target price (token0 in token1) of a pool at the reference prices, or null if a price is unknown. */
export function referencePoolPrice(pool: PoolState, prices: ReferencePrices): number | null {
  const p0 = prices[pool.token0.symbol];
  const p1 = prices[pool.token1.symbol];
  return p0 && p1 ? p0 / p1 : null;
}

/**
 * One market step over all pools: arbitrage swaps toward the (noisy) reference prices, then a few retail swaps.
 * Returns the swaps in execution order and the pool states after them (exact Uniswap v2 arithmetic).
 */
export function planMarketStep(
  pools: PoolState[],
  prices: ReferencePrices,
  rng: Rng,
  options: MarketStepOptions = HISTORY_STEP,
): { swaps: PlannedSwap[]; pools: PoolState[] } {
  const state = pools.map((p) => ({ ...p }));
  const swaps: PlannedSwap[] = [];
  const run = (i: number, swap: PlannedSwap | null): void => {
    if (!swap || swap.amountIn <= 0n || swap.expectedOut <= 0n) return;
    const pool = state[i]!;
    // Re-quote against the current state (earlier swaps in this step may have touched the pool).
    const zeroIn = swap.tokenIn.toLowerCase() === pool.token0.address.toLowerCase();
    const requoted = swapIn(pool, zeroIn, swap.amountIn, swap.kind);
    swaps.push(requoted);
    state[i] = applySwap(pool, requoted);
  };
  for (let i = 0; i < state.length; i++) {
    if (rng() >= options.arbitrageProbability) continue;
    const ref = referencePoolPrice(state[i]!, prices);
    if (ref === null) continue;
    const target = ref * Math.exp(options.targetNoise * gaussian(rng));
    run(i, planSwapToPrice(state[i]!, target, 0.5 + 0.5 * rng(), prices, options.minArbitrageUsd));
  }
  const [minRetail, maxRetail] = options.retailSwaps;
  const retail = minRetail + Math.floor(rng() * (maxRetail - minRetail + 1));
  for (let n = 0; n < retail && state.length > 0; n++) {
    const i = Math.floor(rng() * state.length);
    run(i, planRetailSwap(state[i]!, rng, options.retailFraction));
  }
  return { swaps, pools: state };
}

/**
 * USD prices implied by the pools, walking outward from a numeraire (USDC = 1 by default). Tokens not connected to
 * the numeraire are left out.
 */
export function impliedPricesUsd(pools: PoolState[], numeraire = 'USDC', numeraireUsd = 1): ReferencePrices {
  const prices: ReferencePrices = { [numeraire]: numeraireUsd };
  let changed = true;
  while (changed) {
    changed = false;
    for (const pool of pools) {
      const p = poolPrice(pool);
      if (!(p > 0)) continue;
      const a = pool.token0.symbol;
      const b = pool.token1.symbol;
      if (prices[a] === undefined && prices[b] !== undefined) {
        prices[a] = p * prices[b]!;
        changed = true;
      } else if (prices[b] === undefined && prices[a] !== undefined) {
        prices[b] = prices[a]! / p;
        changed = true;
      }
    }
  }
  return prices;
}
