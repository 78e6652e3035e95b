/**
 * Native prices (native-token atoms per token atom) from Uniswap-V2-style pool reserves. Not from whatever single
 * pool exists: every route (the token/wrapped-native pair, and each connector token) is read, the deepest one is
 * used — depth measured in native atoms on its thinnest side — and a route shallower than `minNativeLiquidity`
 * (default 10 native tokens) gives no price at all, so a freshly created thin pool cannot set a token's price.
 * Prices are cached per token for a short time in a bounded cache; a failed read is not cached.
 */
import { parseAbi, zeroAddress, type Address, type PublicClient } from 'viem';
import type { NativePriceSource } from './trade-estimator.js';
import { BUY_ETH_ADDRESS } from '../../protocol/index.js';

const FACTORY_ABI = parseAbi(['function getPair(address, address) view returns (address)']);
const PAIR_ABI = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)', 'function token0() view returns (address)']);

export interface AmmNativePriceOptions {
  client: PublicClient;
  factory: Address;
  wrappedNative: Address;
  connectors: Address[];
  ttlMs?: number;
  /** the thinnest side of a route must hold at least this much, in native atoms (default 10e18) */
  minNativeLiquidity?: bigint;
  /** cached tokens at most (default 4096; the oldest entry goes first) */
  maxCacheEntries?: number;
}

interface Spot {
  /** quote atoms per base atom */
  price: number;
  baseReserve: bigint;
  quoteReserve: bigint;
}

/** A Map that forgets its oldest entry beyond `max` entries. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}

export class AmmNativePrice implements NativePriceSource {
  private readonly cache = new Map<string, { price: number | null; at: number }>();
  private readonly pairs = new Map<string, Address | null>();

  constructor(private readonly options: AmmNativePriceOptions) {}

  /** Forgets the remembered prices and pairs (the devnet went back to a snapshot). */
  clear(): void {
    this.cache.clear();
    this.pairs.clear();
  }

  private async pair(a: Address, b: Address): Promise<Address | null> {
    const key = [a.toLowerCase(), b.toLowerCase()].sort().join('-');
    if (this.pairs.has(key)) return this.pairs.get(key)!;
    const pair = await this.options.client.readContract({ address: this.options.factory, abi: FACTORY_ABI, functionName: 'getPair', args: [a, b] });
    const found = pair === zeroAddress ? null : (pair.toLowerCase() as Address);
    if (found) setBounded(this.pairs, key, found, this.options.maxCacheEntries ?? 4096); // absent pairs may be created later: not cached
    return found;
  }

  /** spot price of `base` in `quote` atoms per base atom with both reserves, or null */
  private async spot(base: Address, quote: Address): Promise<Spot | null> {
    const pair = await this.pair(base, quote);
    if (!pair) return null;
    const [[r0, r1], token0] = await Promise.all([
      this.options.client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'getReserves' }),
      this.options.client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'token0' }),
    ]);
    if (r0 === 0n || r1 === 0n) return null;
    const baseIs0 = token0.toLowerCase() === base.toLowerCase();
    const [baseReserve, quoteReserve] = baseIs0 ? [r0, r1] : [r1, r0];
    return { price: Number(quoteReserve) / Number(baseReserve), baseReserve, quoteReserve };
  }

  /** every route's price and depth (native atoms on its thinnest side) */
  private async routes(token: Address, weth: Address): Promise<Array<{ price: number; depth: number }>> {
    const direct = this.spot(token, weth).then((s) => (s ? [{ price: s.price, depth: Number(s.quoteReserve) }] : []));
    const viaConnectors = this.options.connectors
      .map((c) => c.toLowerCase() as Address)
      .filter((c) => c !== token && c !== weth)
      .map(async (c) => {
        const [a, b] = await Promise.all([this.spot(token, c), this.spot(c, weth)]);
        if (!a || !b) return [];
        // the connector side of the first hop, valued in native atoms, against the native side of the second
        return [{ price: a.price * b.price, depth: Math.min(Number(a.quoteReserve) * b.price, Number(b.quoteReserve)) }];
      });
    return (await Promise.all([direct, ...viaConnectors])).flat();
  }

  async nativePrice(token: Address): Promise<number | null> {
    const t = token.toLowerCase() as Address;
    const weth = this.options.wrappedNative.toLowerCase() as Address;
    if (t === weth || t === BUY_ETH_ADDRESS) return 1;
    const cached = this.cache.get(t);
    const ttl = this.options.ttlMs ?? 5_000;
    if (cached && Date.now() - cached.at < ttl) return cached.price;
    const floor = Number(this.options.minNativeLiquidity ?? 10n ** 19n);
    const deepest = (await this.routes(t, weth)).filter((r) => r.depth >= floor).sort((x, y) => y.depth - x.depth)[0];
    const price = deepest?.price ?? null;
    setBounded(this.cache, t, { price, at: Date.now() }, this.options.maxCacheEntries ?? 4096);
    return price;
  }
}
