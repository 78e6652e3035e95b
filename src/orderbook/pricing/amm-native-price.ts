/**
 * Native prices (native-token atoms per token atom) from Uniswap-V2-style pool reserves: the spot price on
 * the token/wrapped-native pair, else through one connector token. Cached per token for a short time; a failed
 * read is not cached.
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
}

export class AmmNativePrice implements NativePriceSource {
  private readonly cache = new Map<string, { price: number | null; at: number }>();
  private readonly pairs = new Map<string, Address | null>();

  constructor(private readonly options: AmmNativePriceOptions) {}

  private async pair(a: Address, b: Address): Promise<Address | null> {
    const key = [a.toLowerCase(), b.toLowerCase()].sort().join('-');
    if (this.pairs.has(key)) return this.pairs.get(key)!;
    const pair = await this.options.client.readContract({ address: this.options.factory, abi: FACTORY_ABI, functionName: 'getPair', args: [a, b] });
    const found = pair === zeroAddress ? null : (pair.toLowerCase() as Address);
    if (found) this.pairs.set(key, found); // absent pairs may be created later: not cached
    return found;
  }

  /** spot price of `base` in `quote` atoms per base atom, or null */
  private async spot(base: Address, quote: Address): Promise<number | null> {
    const pair = await this.pair(base, quote);
    if (!pair) return null;
    const [[r0, r1], token0] = await Promise.all([
      this.options.client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'getReserves' }),
      this.options.client.readContract({ address: pair, abi: PAIR_ABI, functionName: 'token0' }),
    ]);
    if (r0 === 0n || r1 === 0n) return null;
    const baseIs0 = token0.toLowerCase() === base.toLowerCase();
    return baseIs0 ? Number(r1) / Number(r0) : Number(r0) / Number(r1);
  }

  async nativePrice(token: Address): Promise<number | null> {
    const t = token.toLowerCase() as Address;
    const weth = this.options.wrappedNative.toLowerCase() as Address;
    if (t === weth || t === BUY_ETH_ADDRESS) return 1;
    const cached = this.cache.get(t);
    const ttl = this.options.ttlMs ?? 5_000;
    if (cached && Date.now() - cached.at < ttl) return cached.price;
    let price = await this.spot(t, weth);
    if (price === null) {
      for (const c of this.options.connectors) {
        const x = c.toLowerCase() as Address;
        if (x === t || x === weth) continue;
        const [a, b] = await Promise.all([this.spot(t, x), this.spot(x, weth)]);
        if (a !== null && b !== null) {
          price = a * b;
          break;
        }
      }
    }
    this.cache.set(t, { price, at: Date.now() });
    return price;
  }
}
