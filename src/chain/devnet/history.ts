// Replays a deterministic market history onto a freshly deployed devnet: one block every 5 minutes up to now,
// each with a few swaps by the market bot, so charts, volumes and balances have a past from the first start.
import { encodeFunctionData, maxUint256, type Hex } from 'viem';
import { uniswapV2PairAbi, uniswapV2RouterAbi } from './abis.js';
import { accountByRole, type DevnetDeployment } from './deployment.js';
import {
  anchorPrices,
  createRng,
  HISTORY_STEP,
  planMarketStep,
  stepReferencePrices,
  type PlannedSwap,
  type PoolState,
  type ReferencePrices,
} from './market-model.js';
import type { DevnetRpc } from './rpc.js';
import { readBatch, toRpcTransaction, type DevTx } from './transactions.js';

export const HISTORY_SEED = 0x5eed_c0;
export const HISTORY_SPACING_SECONDS = 300;
const SWAP_GAS = 250_000n;

export interface HistoryOptions {
  hours: number;
  /** Timestamp of the last history block. */
  endTimestamp: number;
  spacingSeconds?: number;
  seed?: number;
}

export interface HistoryResult {
  blocks: number;
  swaps: number;
  /** Reference prices at the end of the replay. */
  prices: ReferencePrices;
  pools: PoolState[];
}

export interface HistoryPlan {
  blocks: { timestamp: number; swaps: PlannedSwap[] }[];
  prices: ReferencePrices;
  pools: PoolState[];
}

/** The whole history, computed off chain (pure and deterministic for a seed). */
export function planHistory(pools: PoolState[], options: HistoryOptions): HistoryPlan {
  const spacing = options.spacingSeconds ?? HISTORY_SPACING_SECONDS;
  const count = Math.max(0, Math.round((options.hours * 3600) / spacing));
  const rng = createRng(options.seed ?? HISTORY_SEED);
  let prices = anchorPrices();
  let state = pools;
  const blocks: HistoryPlan['blocks'] = [];
  for (let i = 0; i < count; i++) {
    prices = stepReferencePrices(prices, spacing, rng);
    const step = planMarketStep(state, prices, rng, HISTORY_STEP);
    state = step.pools;
    blocks.push({ timestamp: options.endTimestamp - (count - 1 - i) * spacing, swaps: step.swaps });
  }
  return { blocks, prices, pools: state };
}

export function encodeRouterSwap(swap: PlannedSwap, recipient: Hex): Hex {
  return encodeFunctionData({
    abi: uniswapV2RouterAbi,
    functionName: 'swapExactTokensForTokens',
    args: [swap.amountIn, 0n, [swap.tokenIn, swap.tokenOut], recipient, maxUint256],
  });
}

/**
 * Sends the planned swaps block by block (one batch of eth_sendTransaction with explicit nonces, then evm_mine with
 * the block's timestamp), then checks the on-chain reserves equal the planned ones — which they do only if every
 * swap succeeded.
 */
export async function replayMarketHistory(
  rpc: DevnetRpc,
  deployment: DevnetDeployment,
  pools: PoolState[],
  options: HistoryOptions,
): Promise<HistoryResult> {
  const plan = planHistory(pools, options);
  const bot = accountByRole(deployment, 'market-bot').address;
  let nonce = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [bot, 'latest'])));
  let swaps = 0;
  for (const block of plan.blocks) {
    if (block.swaps.length > 0) {
      const txs: DevTx[] = block.swaps.map((s) => ({
        label: 'history swap',
        from: bot,
        to: deployment.contracts.ammRouter,
        data: encodeRouterSwap(s, bot),
        gas: SWAP_GAS,
        nonce: nonce++,
      }));
      await rpc.batch(txs.map((tx) => ({ method: 'eth_sendTransaction', params: [toRpcTransaction(tx)] })));
      swaps += txs.length;
    }
    await rpc.request('evm_mine', [block.timestamp]);
  }

  const onChain = (await readBatch(
    rpc,
    plan.pools.map((p) => ({ to: p.address, abi: uniswapV2PairAbi, functionName: 'getReserves' })),
  )) as [bigint, bigint, number][];
  plan.pools.forEach((p, i) => {
    const [r0, r1] = onChain[i]!;
    if (r0 !== p.reserve0 || r1 !== p.reserve1) {
      throw new Error(
        `devnet: history replay diverged on pool ${p.token0.symbol}/${p.token1.symbol} (${p.address}): ` +
          `reserves ${r0}/${r1}, planned ${p.reserve0}/${p.reserve1} — a history swap failed`,
      );
    }
  });
  return { blocks: plan.blocks.length, swaps, prices: plan.prices, pools: plan.pools };
}
