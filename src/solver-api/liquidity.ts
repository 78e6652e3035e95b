/**
 * Uniswap-V2 pools as the auction's `constantProduct` liquidity: every pair among each order's tokens and the
 * network's connector tokens (direct and one-hop routes, as the AMM router searches them) that exists in the
 * factory, with its reserves at the auction's block, read in Multicall3 rounds. Pair addresses are remembered.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, zeroAddress, type Address } from 'viem';
import type { ChainClient } from '../chain/client.js';
import { aggregate3 } from '../chain/multicall.js';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import type { SolverConstantProductPool } from './schemas.js';

const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);
const PAIR_ABI = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)', 'function token0() view returns (address)']);

/** Uniswap V2's fee and a typical gas cost of one swap through a pair. */
export const UNISWAP_V2_FEE = '0.003';
export const UNISWAP_V2_SWAP_GAS = 110_000n;

export interface PoolNetwork {
  client: ChainClient;
  amm: { factory: Address; router: Address } | null;
  connectors: Address[];
  wrappedNative: Address | null;
}

const lower = (a: string): Address => a.toLowerCase() as Address;
const key = (a: Address, b: Address): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

/** The token pairs an auction's orders can trade through: direct, and via each connector (ETH buys as wrapped native). */
export function routablePairs(orders: ReadonlyArray<{ sellToken: Address; buyToken: Address }>, connectors: Address[], wrappedNative: Address | null): Array<[Address, Address]> {
  const out = new Map<string, [Address, Address]>();
  const add = (a: Address, b: Address) => {
    if (a !== b) out.set(key(a, b), a < b ? [a, b] : [b, a]);
  };
  for (const o of orders) {
    const sell = lower(o.sellToken);
    const buy = lower(o.buyToken) === BUY_ETH_ADDRESS ? (wrappedNative ? lower(wrappedNative) : null) : lower(o.buyToken);
    if (buy === null) continue;
    add(sell, buy);
    for (const c of connectors.map(lower)) {
      add(sell, c);
      add(c, buy);
    }
  }
  return [...out.values()];
}

export class ConstantProductLiquidity {
  private readonly pairs = new Map<string, { address: Address; token0: Address; token1: Address } | null>();

  constructor(private readonly network: PoolNetwork) {}

  /** The pools of `tokenPairs` that exist, with reserves at `blockNumber`; ids are their index in the list. */
  async pools(tokenPairs: Array<[Address, Address]>, blockNumber: bigint): Promise<SolverConstantProductPool[]> {
    const amm = this.network.amm;
    if (!amm || tokenPairs.length === 0) return [];
    const client = this.network.client;
    const unknown = tokenPairs.filter(([a, b]) => !this.pairs.has(key(a, b)));
    if (unknown.length > 0) {
      const found = await aggregate3(client, unknown.map(([a, b]) => ({ target: amm.factory, callData: encodeFunctionData({ abi: FACTORY_ABI, functionName: 'getPair', args: [a, b] }) })), { blockNumber });
      const created: Array<{ pair: [Address, Address]; address: Address }> = [];
      unknown.forEach((pair, i) => {
        const r = found[i];
        if (!r?.success) return;
        const address = lower(decodeFunctionResult({ abi: FACTORY_ABI, functionName: 'getPair', data: r.returnData }));
        if (address !== zeroAddress) created.push({ pair, address });
      });
      const token0s = await aggregate3(client, created.map((c) => ({ target: c.address, callData: encodeFunctionData({ abi: PAIR_ABI, functionName: 'token0' }) })), { blockNumber });
      created.forEach(({ pair: [a, b], address }, i) => {
        const r = token0s[i];
        if (!r?.success) return;
        const token0 = lower(decodeFunctionResult({ abi: PAIR_ABI, functionName: 'token0', data: r.returnData }));
        this.pairs.set(key(a, b), { address, token0, token1: token0 === a ? b : a });
      });
    }
    const present = tokenPairs.flatMap(([a, b]) => {
      const p = this.pairs.get(key(a, b));
      return p ? [p] : [];
    });
    const reserves = await aggregate3(client, present.map((p) => ({ target: p.address, callData: encodeFunctionData({ abi: PAIR_ABI, functionName: 'getReserves' }) })), { blockNumber });
    const pools: SolverConstantProductPool[] = [];
    present.forEach((p, i) => {
      const r = reserves[i];
      if (!r?.success) return;
      const [reserve0, reserve1] = decodeFunctionResult({ abi: PAIR_ABI, functionName: 'getReserves', data: r.returnData });
      if (reserve0 === 0n || reserve1 === 0n) return;
      pools.push({
        kind: 'constantProduct',
        id: String(pools.length),
        address: p.address,
        router: lower(amm.router),
        fee: UNISWAP_V2_FEE,
        gasEstimate: UNISWAP_V2_SWAP_GAS,
        tokens: { [p.token0]: { balance: reserve0 }, [p.token1]: { balance: reserve1 } },
      });
    });
    return pools;
  }
}
