/**
 * Uniswap-V2 pool reserves, read once per block: the block feed's newest head keys a snapshot; the first request
 * after a new head reads the reserves of every pool seen so far (plus the ones asked for) in one Multicall3
 * `eth_call`, and every request until the next head is answered from memory. A pool's address comes from the
 * factory once (`getPair`, cached while it exists; an absent pair is asked again in the next block). Without a
 * running block feed (no head known) nothing is kept: each request reads afresh.
 *
 * The router math (`getAmountsOut` / `getAmountsIn` of UniswapV2Library, 0.3 % fee) runs in memory on the snapshot,
 * with the router's reverts (no pair, empty reserves, zero input, output at or above the reserve) as `null`.
 *
 * @example
 *   const pools = new PoolReserves({ client, factory, blockFeed: reader.blockFeed });
 *   const out = amountsOut(10n ** 18n, [weth, usdc], await pools.reservesOf([[weth, usdc]]));
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, zeroAddress, type Address, type Hex } from 'viem';
import { aggregate3, type Call3 } from '../../chain/multicall.js';
import { MULTICALL3_ADDRESS, type ChainClient } from '../../chain/client.js';

const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);
const PAIR_ABI = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)']);

/** Reserves of a pool, by the pool's tokens in address order (token0 < token1, as Uniswap V2 sorts them). */
export interface PairReserves {
  token0: Address;
  token1: Address;
  reserve0: bigint;
  reserve1: bigint;
}

/** Reserves by pair key (`pairKey(a, b)`); a key mapped to null has no pool (or its reserves could not be read). */
export type ReserveSnapshot = ReadonlyMap<string, PairReserves | null>;

export interface PoolReservesOptions {
  client: ChainClient;
  factory: Address;
  /** the chain's shared block feed; only its newest head while the chain answers is read (`current`) */
  blockFeed?: { readonly current: { hash: Hex } | null } | null;
  multicallAddress?: Address;
  /** pools refreshed per block at most (default 2,000; the least recently asked go first) */
  maxPools?: number;
}

export function pairKey(a: Address, b: Address): string {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? `${x}-${y}` : `${y}-${x}`;
}

export class PoolReserves {
  /** pool address by pair key, for pools that exist (kept; pools are never destroyed) */
  private readonly pools = new Map<string, Address>();
  private snapshotHead: Hex | null = null;
  private snapshot = new Map<string, Promise<PairReserves | null>>();
  private readonly multicallAddress: Address;

  constructor(private readonly options: PoolReservesOptions) {
    this.multicallAddress = options.multicallAddress ?? (options.client.chain?.contracts?.multicall3?.address as Address | undefined) ?? MULTICALL3_ADDRESS;
  }

  /** Reserves of each pair (by key) at the newest block; one multicall per block for all known pools. */
  async reservesOf(pairs: Array<[Address, Address]>): Promise<ReserveSnapshot> {
    const head = this.options.blockFeed?.current?.hash ?? null;
    if (head === null || head !== this.snapshotHead) {
      this.snapshotHead = head;
      this.snapshot = new Map();
      if (head !== null) this.readInto([...this.pools.keys()].map(splitKey));
    }
    const wanted = pairs.map(([a, b]) => [a.toLowerCase(), b.toLowerCase()] as [Address, Address]);
    const missing = wanted.filter(([a, b]) => !this.snapshot.has(pairKey(a, b)));
    if (missing.length > 0) this.readInto(missing);
    const out = new Map<string, PairReserves | null>();
    const snapshot = this.snapshot;
    if (head === null) this.snapshot = new Map(); // no feed: nothing outlives this request
    await Promise.all(
      wanted.map(async ([a, b]) => {
        const key = pairKey(a, b);
        out.set(key, await snapshot.get(key)!);
      }),
    );
    return out;
  }

  /** Starts reading these pairs into the current snapshot (one round for unknown pool addresses, one for reserves). */
  private readInto(pairs: Array<[Address, Address]>): void {
    const keys = [...new Set(pairs.map(([a, b]) => pairKey(a, b)))].filter((k) => !this.snapshot.has(k));
    if (keys.length === 0) return;
    const read = this.read(keys);
    // a failed read is not kept: the next request in the block asks again
    const snapshot = this.snapshot;
    read.catch(() => keys.forEach((k) => snapshot.delete(k)));
    keys.forEach((key) => {
      const reserves = read.then((m) => m.get(key) ?? null);
      reserves.catch(() => {}); // a prefetched pool nobody asks for must not be an unhandled rejection
      snapshot.set(key, reserves);
    });
  }

  private async read(keys: string[]): Promise<Map<string, PairReserves | null>> {
    const { client, factory } = this.options;
    const unknown = keys.filter((k) => !this.pools.has(k));
    if (unknown.length > 0) {
      const calls: Call3[] = unknown.map((k) => ({ target: factory, callData: encodeFunctionData({ abi: FACTORY_ABI, functionName: 'getPair', args: splitKey(k) }) }));
      const results = await aggregate3(client, calls, { multicallAddress: this.multicallAddress });
      results.forEach((r, i) => {
        if (!r.success || r.returnData.length < 66) return;
        const pool = decodeFunctionResult({ abi: FACTORY_ABI, functionName: 'getPair', data: r.returnData });
        if (pool !== zeroAddress) this.remember(unknown[i]!, pool.toLowerCase() as Address);
      });
    }
    const known = keys.filter((k) => this.pools.has(k));
    const out = new Map<string, PairReserves | null>(keys.map((k) => [k, null]));
    if (known.length === 0) return out;
    const calls: Call3[] = known.map((k) => ({ target: this.pools.get(k)!, callData: encodeFunctionData({ abi: PAIR_ABI, functionName: 'getReserves' }) }));
    const results = await aggregate3(client, calls, { multicallAddress: this.multicallAddress });
    results.forEach((r, i) => {
      if (!r.success || r.returnData.length < 2 + 64 * 3) return;
      const [reserve0, reserve1] = decodeFunctionResult({ abi: PAIR_ABI, functionName: 'getReserves', data: r.returnData });
      const [token0, token1] = splitKey(known[i]!);
      out.set(known[i]!, { token0, token1, reserve0, reserve1 });
    });
    return out;
  }

  private remember(key: string, pool: Address): void {
    this.pools.set(key, pool);
    const max = this.options.maxPools ?? 2_000;
    while (this.pools.size > max) this.pools.delete(this.pools.keys().next().value as string);
  }
}

function splitKey(key: string): [Address, Address] {
  const [a, b] = key.split('-');
  return [a as Address, b as Address];
}

/** [reserve of `tokenIn`, reserve of the other token] of a pool, or null when there is no usable pool. */
function oriented(snapshot: ReserveSnapshot, tokenIn: Address, tokenOut: Address): [bigint, bigint] | null {
  const r = snapshot.get(pairKey(tokenIn, tokenOut));
  if (!r || r.reserve0 === 0n || r.reserve1 === 0n) return null;
  return r.token0 === tokenIn.toLowerCase() ? [r.reserve0, r.reserve1] : [r.reserve1, r.reserve0];
}

/** UniswapV2Library.getAmountsOut in memory: the amounts along `path`, or null where the router would revert. */
export function amountsOut(amountIn: bigint, path: Address[], snapshot: ReserveSnapshot): bigint[] | null {
  if (path.length < 2) return null;
  const amounts = [amountIn];
  for (let i = 0; i < path.length - 1; i++) {
    const reserves = oriented(snapshot, path[i]!, path[i + 1]!);
    const input = amounts[i]!;
    if (!reserves || input <= 0n) return null;
    const withFee = input * 997n;
    amounts.push((withFee * reserves[1]) / (reserves[0] * 1000n + withFee));
  }
  return amounts;
}

/** UniswapV2Library.getAmountsIn in memory: the amounts along `path` to get `amountOut`, or null where it would revert. */
export function amountsIn(amountOut: bigint, path: Address[], snapshot: ReserveSnapshot): bigint[] | null {
  if (path.length < 2) return null;
  const amounts = new Array<bigint>(path.length);
  amounts[path.length - 1] = amountOut;
  for (let i = path.length - 1; i > 0; i--) {
    const reserves = oriented(snapshot, path[i - 1]!, path[i]!);
    const output = amounts[i]!;
    if (!reserves || output <= 0n || output >= reserves[1]) return null;
    amounts[i - 1] = (reserves[0] * output * 1000n) / ((reserves[1] - output) * 997n) + 1n;
  }
  return amounts;
}
