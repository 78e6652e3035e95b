/**
 * First-party price estimation from Uniswap-V2-style pools on chain: quotes the direct pair and the routes
 * through connector tokens (the wrapped native token first) with the router's getAmountsOut / getAmountsIn in
 * one batched round of eth_calls, and picks the best. Works on the devnet and on any chain with such an AMM.
 * With `reserves` (the pools read once per block from the block feed) the routes are computed in memory on the
 * block's reserves with the router's own math instead: no eth_call per quote.
 */
import { BaseError, ContractFunctionRevertedError, parseAbi, type Address, type PublicClient } from 'viem';
import { OrderBookError } from '../../protocol/order-book-error.js';
import type { TradeEstimate, TradeEstimateRequest, TradeEstimator } from './trade-estimator.js';
import { amountsIn, amountsOut, type PoolReserves } from './pool-reserves.js';

export const UNISWAP_V2_ROUTER_ABI = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function getAmountsIn(uint256 amountOut, address[] path) view returns (uint256[] amounts)',
  'function factory() view returns (address)',
]);

/** gas of a settlement with one AMM trade: settlement overhead + one swap per hop (measured on the devnet order of magnitude) */
export function settlementGas(hops: number): bigint {
  return 110_000n + 70_000n * BigInt(hops);
}

export interface UniswapV2EstimatorOptions {
  client: PublicClient;
  router: Address;
  /** intermediate tokens to try (wrapped native first) */
  connectors: Address[];
  name?: string;
  /** pool reserves per block: routes computed in memory (default: the router's eth_calls per estimate) */
  reserves?: PoolReserves | null;
}

export class UniswapV2Estimator implements TradeEstimator {
  readonly name: string;
  constructor(private readonly options: UniswapV2EstimatorOptions) {
    this.name = options.name ?? 'amm-uniswap-v2';
  }

  paths(sellToken: Address, buyToken: Address): Address[][] {
    const s = sellToken.toLowerCase() as Address;
    const b = buyToken.toLowerCase() as Address;
    const paths: Address[][] = [[s, b]];
    for (const c of this.options.connectors) {
      const x = c.toLowerCase() as Address;
      if (x !== s && x !== b) paths.push([s, x, b]);
    }
    return paths;
  }

  async estimate(request: TradeEstimateRequest): Promise<TradeEstimate> {
    const { client, router } = this.options;
    if (request.amount <= 0n) throw new OrderBookError('NoLiquidity', 'no liquidity for a zero amount');
    const paths = this.paths(request.sellToken, request.buyToken);
    const results = this.options.reserves ? await this.inMemory(request, paths, this.options.reserves) : await Promise.all(
      paths.map(async (path) => {
        try {
          const amounts =
            request.kind === 'sell'
              ? await client.readContract({ address: router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsOut', args: [request.amount, path] })
              : await client.readContract({ address: router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsIn', args: [request.amount, path] });
          const out = request.kind === 'sell' ? amounts[amounts.length - 1]! : amounts[0]!;
          return out > 0n ? { path, out } : null;
        } catch (err) {
          if (isRevert(err)) return null; // no pair on this path, or not enough reserves
          throw err; // the node is unreachable or failing: not "no liquidity"
        }
      }),
    );
    let best: { path: Address[]; out: bigint } | null = null;
    for (const r of results) {
      if (!r) continue;
      if (!best || (request.kind === 'sell' ? r.out > best.out : r.out < best.out)) best = r;
    }
    if (!best) throw new OrderBookError('NoLiquidity', `no liquidity path from ${request.sellToken} to ${request.buyToken} at this amount`);
    return { outAmount: best.out, gas: settlementGas(best.path.length - 1), solver: this.name, verified: false };
  }

  private async inMemory(request: TradeEstimateRequest, paths: Address[][], reserves: PoolReserves): Promise<Array<{ path: Address[]; out: bigint } | null>> {
    const hops = paths.flatMap((path) => path.slice(1).map((to, i) => [path[i]!, to] as [Address, Address]));
    const snapshot = await reserves.reservesOf(hops);
    return paths.map((path) => {
      const amounts = request.kind === 'sell' ? amountsOut(request.amount, path, snapshot) : amountsIn(request.amount, path, snapshot);
      if (!amounts) return null;
      const out = request.kind === 'sell' ? amounts[amounts.length - 1]! : amounts[0]!;
      return out > 0n ? { path, out } : null;
    });
  }
}

/** A contract revert (no pair, insufficient reserves) as opposed to a transport or node failure. */
export function isRevert(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  if (err.walk((e) => e instanceof ContractFunctionRevertedError)) return true;
  return /execution reverted|revert/i.test(err.details ?? '') || /execution reverted/i.test(err.shortMessage);
}
