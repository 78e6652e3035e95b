// The live market-activity bot: swaps on the devnet's pools from the market-bot account at random times and
// sizes (a few per minute), steering pool prices along the reference-price random walk of market-model.ts, so
// prices move, volumes accrue and balances change. Stops on abort; errors are logged and never thrown.
import type { Address, Hex } from 'viem';
import { devnetTokenAbi, uniswapV2PairAbi } from './abis.js';
import { accountByRole, type DevnetDeployment } from './deployment.js';
import { encodeRouterSwap } from './history.js';
import {
  createRng,
  exponential,
  gaussian,
  impliedPricesUsd,
  planRetailSwap,
  planSwapToPrice,
  poolPrice,
  referencePoolPrice,
  stepReferencePrices,
  type PlannedSwap,
  type PoolState,
  type ReferencePrices,
  type Rng,
} from './market-model.js';
import { createDevnetRpc, type DevnetRpc } from './rpc.js';
import { readBatch } from './transactions.js';
import { sleep } from '../../infra/abortable-sleep.js';

export interface DevnetLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export interface MarketBotOptions {
  rpcUrl: string;
  deployment: DevnetDeployment;
  signal: AbortSignal;
  logger?: DevnetLogger;
  /** Average swaps per minute (Poisson arrivals). Default 4. */
  swapsPerMinute?: number;
  /** Seed of the bot's random choices. Default: time-based. */
  seed?: number;
  /** Only retail swaps, never steering pools toward the devnet's reference prices (fork mode: real pools' prices). */
  retailOnly?: boolean;
}

export interface MarketBotStats {
  swaps: number;
  errors: number;
  lastError: string | null;
}

export interface MarketBot {
  /** Resolves when the bot has stopped (after the signal aborts). Never rejects. */
  readonly done: Promise<void>;
  stats(): MarketBotStats;
}

const SWAP_GAS = 250_000n;
/** Live retail swaps: 0.003 %–0.1 % of the input reserve, i.e. price moves of ~0.5–20 bp. */
const LIVE_RETAIL_FRACTION: [number, number] = [3e-5, 1e-3];

export function startMarketBot(options: MarketBotOptions): MarketBot {
  const rpc = createDevnetRpc(options.rpcUrl, { timeoutMs: 15_000 });
  const rng = createRng(options.seed ?? (Date.now() ^ (process.pid << 16)));
  const meanWaitMs = 60_000 / Math.max(0.01, options.swapsPerMinute ?? 4);
  const stats: MarketBotStats = { swaps: 0, errors: 0, lastError: null };
  const done = runBot(options, rpc, rng, meanWaitMs, stats).catch((err) => {
    options.logger?.error(`devnet: market bot stopped on an unexpected error: ${(err as Error).message}`);
  });
  return { done, stats: () => ({ ...stats }) };
}

async function runBot(options: MarketBotOptions, rpc: DevnetRpc, rng: Rng, meanWaitMs: number, stats: MarketBotStats): Promise<void> {
  const { deployment, signal, logger } = options;
  const bot = accountByRole(deployment, 'market-bot').address;
  const tokens = new Map(deployment.tokens.map((t) => [t.address.toLowerCase(), t]));
  let prices: ReferencePrices | null = null;
  let lastStep = Date.now();
  let pendingHash: Hex | null = null;
  let consecutiveErrors = 0;

  while (!signal.aborted) {
    await sleep(exponential(rng, meanWaitMs), signal);
    if (signal.aborted) break;
    try {
      if (pendingHash) {
        const receipt = await rpc.request<{ status: Hex } | null>('eth_getTransactionReceipt', [pendingHash]);
        if (receipt && receipt.status !== '0x1') logger?.warn(`devnet: market bot swap ${pendingHash} reverted`);
        pendingHash = null;
      }
      const pools = await readPools(rpc, deployment, tokens);
      const now = Date.now();
      prices = prices === null ? impliedPricesUsd(pools) : stepReferencePrices(prices, (now - lastStep) / 1000, rng);
      lastStep = now;
      const swap = chooseSwap(pools, prices, rng, options.retailOnly ?? false);
      if (!swap) continue;
      const [balance] = (await readBatch(rpc, [
        { to: swap.tokenIn, abi: devnetTokenAbi, functionName: 'balanceOf', args: [bot] },
      ])) as [bigint];
      if (balance < swap.amountIn) {
        logger?.warn(`devnet: market bot is short of ${tokens.get(swap.tokenIn.toLowerCase())?.symbol ?? swap.tokenIn}; skipping a swap`);
        continue;
      }
      const nonce = await rpc.request<Hex>('eth_getTransactionCount', [bot, 'pending']);
      pendingHash = await rpc.request<Hex>('eth_sendTransaction', [
        {
          from: bot,
          to: deployment.contracts.ammRouter,
          data: encodeRouterSwap(swap, bot),
          gas: `0x${SWAP_GAS.toString(16)}`,
          nonce,
        },
      ]);
      stats.swaps++;
      consecutiveErrors = 0;
    } catch (err) {
      if (signal.aborted) break;
      stats.errors++;
      stats.lastError = (err as Error).message;
      consecutiveErrors++;
      // Log the first failures of a streak, then only now and then (a dead chain would otherwise flood the log).
      if (consecutiveErrors <= 3 || consecutiveErrors % 50 === 0) {
        logger?.warn(`devnet: market bot swap failed (${consecutiveErrors} in a row): ${stats.lastError}`);
      }
    }
  }
}

/** Either an arbitrage swap on the pool furthest from its reference price, or a retail swap on a random pool. */
function chooseSwap(pools: PoolState[], prices: ReferencePrices, rng: Rng, retailOnly: boolean): PlannedSwap | null {
  if (pools.length === 0) return null;
  if (!retailOnly && rng() < 0.5) {
    let worst: { pool: PoolState; ref: number; gap: number } | null = null;
    for (const pool of pools) {
      const ref = referencePoolPrice(pool, prices);
      if (ref === null) continue;
      const gap = Math.abs(Math.log(poolPrice(pool) / ref));
      if (!worst || gap > worst.gap) worst = { pool, ref, gap };
    }
    if (worst && worst.gap > 0.0003) {
      const swap = planSwapToPrice(worst.pool, worst.ref * Math.exp(0.0002 * gaussian(rng)), 0.5 + 0.5 * rng(), prices, 5);
      if (swap) return swap;
    }
  }
  const pool = pools[Math.floor(rng() * pools.length)]!;
  return planRetailSwap(pool, rng, LIVE_RETAIL_FRACTION);
}

async function readPools(
  rpc: DevnetRpc,
  deployment: DevnetDeployment,
  tokens: Map<string, { address: Address; symbol: string; decimals: number }>,
): Promise<PoolState[]> {
  const reserves = (await readBatch(
    rpc,
    deployment.pools.map((p) => ({ to: p.address, abi: uniswapV2PairAbi, functionName: 'getReserves' })),
  )) as [bigint, bigint, number][];
  return deployment.pools.map((p, i) => {
    const t0 = tokens.get(p.token0.toLowerCase())!;
    const t1 = tokens.get(p.token1.toLowerCase())!;
    return {
      address: p.address,
      token0: { address: t0.address, symbol: t0.symbol, decimals: t0.decimals },
      token1: { address: t1.address, symbol: t1.symbol, decimals: t1.decimals },
      reserve0: reserves[i]![0],
      reserve1: reserves[i]![1],
    };
  });
}
