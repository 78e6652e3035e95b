/**
 * Uniswap-V2 pools as a solver sees them: reserves read at one block in one Multicall3 round (pair addresses
 * are looked up once through the factory and remembered), swap amounts computed exactly as the V2 router does
 * (0.3 % fee, integer rounding), and a local copy of the reserves that each routed trade updates, so that
 * several trades through one pool are priced one after the other as the chain will execute them.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, zeroAddress, type Address } from 'viem';
import type { ChainClient } from '../chain/client.js';
import { aggregate3 } from '../chain/multicall.js';

const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);
const PAIR_ABI = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)', 'function token0() view returns (address)']);

/** amountOut of `amountIn` through one V2 pool (UniswapV2Library.getAmountOut). */
export function getAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  if (amountIn <= 0n || reserveIn <= 0n || reserveOut <= 0n) return 0n;
  const withFee = amountIn * 997n;
  return (withFee * reserveOut) / (reserveIn * 1000n + withFee);
}

/** amountIn needed for `amountOut` through one V2 pool (UniswapV2Library.getAmountIn); null when the pool cannot pay it. */
export function getAmountIn(amountOut: bigint, reserveIn: bigint, reserveOut: bigint): bigint | null {
  if (amountOut <= 0n || reserveIn <= 0n || amountOut >= reserveOut) return null;
  return (reserveIn * amountOut * 1000n) / ((reserveOut - amountOut) * 997n) + 1n;
}

interface PoolState {
  address: Address;
  token0: Address;
  reserve0: bigint;
  reserve1: bigint;
}

const pairKey = (a: Address, b: Address): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

/** Pair addresses by token pair, remembered across auctions (a missing pair is asked again: it may be created later). */
export class PairDirectory {
  private readonly pairs = new Map<string, { address: Address; token0: Address }>();

  constructor(
    private readonly client: ChainClient,
    private readonly factory: Address,
  ) {}

  /** Reserves of every existing pair among `tokenPairs`, at `blockNumber`. */
  async snapshot(tokenPairs: Array<[Address, Address]>, blockNumber?: bigint): Promise<PoolSnapshot> {
    const wanted = new Map<string, [Address, Address]>();
    for (const [a, b] of tokenPairs) if (a !== b) wanted.set(pairKey(a, b), [a, b]);
    const unknown = [...wanted].filter(([k]) => !this.pairs.has(k));
    if (unknown.length > 0) {
      const found = await aggregate3(
        this.client,
        unknown.map(([, [a, b]]) => ({ target: this.factory, callData: encodeFunctionData({ abi: FACTORY_ABI, functionName: 'getPair', args: [a, b] }) })),
        { blockNumber },
      );
      const created: Array<[string, Address]> = [];
      unknown.forEach(([k], i) => {
        const r = found[i];
        if (!r?.success) return;
        const address = decodeFunctionResult({ abi: FACTORY_ABI, functionName: 'getPair', data: r.returnData }).toLowerCase() as Address;
        if (address !== zeroAddress) created.push([k, address]);
      });
      const token0s = await aggregate3(
        this.client,
        created.map(([, address]) => ({ target: address, callData: encodeFunctionData({ abi: PAIR_ABI, functionName: 'token0' }) })),
        { blockNumber },
      );
      created.forEach(([k, address], i) => {
        const r = token0s[i];
        if (!r?.success) return;
        const token0 = decodeFunctionResult({ abi: PAIR_ABI, functionName: 'token0', data: r.returnData }).toLowerCase() as Address;
        this.pairs.set(k, { address, token0 });
      });
    }
    const present = [...wanted.keys()].flatMap((k) => (this.pairs.has(k) ? [[k, this.pairs.get(k)!] as const] : []));
    const reserves = await aggregate3(
      this.client,
      present.map(([, p]) => ({ target: p.address, callData: encodeFunctionData({ abi: PAIR_ABI, functionName: 'getReserves' }) })),
      { blockNumber },
    );
    const pools = new Map<string, PoolState>();
    present.forEach(([k, p], i) => {
      const r = reserves[i];
      if (!r?.success) return;
      const [reserve0, reserve1] = decodeFunctionResult({ abi: PAIR_ABI, functionName: 'getReserves', data: r.returnData });
      pools.set(k, { address: p.address, token0: p.token0, reserve0, reserve1 });
    });
    return new PoolSnapshot(pools);
  }
}

/** A local, mutable copy of pool reserves. */
export class PoolSnapshot {
  constructor(private readonly pools: Map<string, PoolState>) {}

  private reserves(from: Address, to: Address): { pool: PoolState; reserveIn: bigint; reserveOut: bigint } | null {
    const pool = this.pools.get(pairKey(from, to));
    if (!pool) return null;
    return pool.token0 === from ? { pool, reserveIn: pool.reserve0, reserveOut: pool.reserve1 } : { pool, reserveIn: pool.reserve1, reserveOut: pool.reserve0 };
  }

  /** Output of selling `amountIn` along `path`, or null without a pool on some hop. */
  amountOut(path: Address[], amountIn: bigint): bigint | null {
    let amount = amountIn;
    for (let i = 0; i + 1 < path.length; i++) {
      const r = this.reserves(path[i], path[i + 1]);
      if (!r) return null;
      amount = getAmountOut(amount, r.reserveIn, r.reserveOut);
      if (amount <= 0n) return null;
    }
    return amount;
  }

  /** Input needed to buy `amountOut` at the end of `path`, or null. */
  amountIn(path: Address[], amountOut: bigint): bigint | null {
    let amount = amountOut;
    for (let i = path.length - 1; i > 0; i--) {
      const r = this.reserves(path[i - 1], path[i]);
      if (!r) return null;
      const needed = getAmountIn(amount, r.reserveIn, r.reserveOut);
      if (needed === null) return null;
      amount = needed;
    }
    return amount;
  }

  /** Applies `swapExactTokensForTokens(amountIn, path)` to the reserves, as the router executes it. */
  applyExactIn(path: Address[], amountIn: bigint): void {
    let amount = amountIn;
    for (let i = 0; i + 1 < path.length; i++) {
      const r = this.reserves(path[i], path[i + 1])!;
      const out = getAmountOut(amount, r.reserveIn, r.reserveOut);
      this.move(r.pool, path[i], amount, out);
      amount = out;
    }
  }

  /** Applies `swapTokensForExactTokens(amountOut, path)`: each hop pays exactly what the next one needs. */
  applyExactOut(path: Address[], amountOut: bigint): void {
    const amounts: bigint[] = new Array(path.length);
    amounts[path.length - 1] = amountOut;
    for (let i = path.length - 1; i > 0; i--) {
      const r = this.reserves(path[i - 1], path[i])!;
      amounts[i - 1] = getAmountIn(amounts[i], r.reserveIn, r.reserveOut)!;
    }
    for (let i = 0; i + 1 < path.length; i++) this.move(this.reserves(path[i], path[i + 1])!.pool, path[i], amounts[i], amounts[i + 1]);
  }

  private move(pool: PoolState, tokenIn: Address, amountIn: bigint, amountOut: bigint): void {
    if (pool.token0 === tokenIn) {
      pool.reserve0 += amountIn;
      pool.reserve1 -= amountOut;
    } else {
      pool.reserve1 += amountIn;
      pool.reserve0 -= amountOut;
    }
  }
}
