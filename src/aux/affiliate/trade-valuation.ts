/**
 * What a trade is worth for the affiliate program, in USD, so that volume cannot be made up with play money:
 *
 * - the sell token's **native price in the auction of the trade's block** — the auction its settlement won when the
 *   node ran it, else the newest auction at or before that block that priced the token (both kept in
 *   `solver_competitions`); a token no auction priced is worth nothing here. Prices a trader sets afterwards, or in
 *   a pool created for the trade, do not count;
 * - times the USD price of the chain's native token;
 * - and only when the token has at least `minLiquidityUsd` of AMM liquidity on the chain (its deepest route to the
 *   wrapped native token, measured on the thinnest side), so a self-priced token with a minimal pool is worth
 *   nothing, whatever the chain's native token costs. A chain without a known AMM skips this check (the auction's
 *   prices then come only from the order book's own floor).
 *
 * `usdValue` answers null for "no price" (stored unpriced) and rejects on a transient failure (retried).
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { toBytes } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import type { ChainNetwork } from '../../chain/network.js';
import { AmmNativePrice } from '../../orderbook/pricing/amm-native-price.js';
import type { UsdPriceService } from '../market/prices/usd-price-service.js';

/** native-price scale of auctions (native atoms per token atom × 1e18) */
const PRICE_SCALE = 10n ** 18n;

export interface TradeValuationOptions {
  db: Kysely<DB>;
  network: Pick<ChainNetwork, 'chainId' | 'client' | 'reader' | 'amm' | 'wrappedNative' | 'connectors'>;
  usdPrices: Pick<UsdPriceService, 'usdPriceOrNull'>;
  minLiquidityUsd: number;
}

export interface TradeRef {
  blockNumber: number;
  txHash: Hex | null;
}

export class TradeValuation {
  /** depth checkers by floor (native atoms, two significant digits), so the floor follows the native price */
  private depth: { floor: bigint; source: AmmNativePrice } | null = null;

  constructor(private readonly options: TradeValuationOptions) {}

  async usdValue(token: Address, atoms: bigint, trade: TradeRef): Promise<number | null> {
    const price = await this.auctionPrice(token, trade);
    if (price === null) return null;
    const usdPerNative = await this.options.usdPrices.usdPriceOrNull('native');
    if (usdPerNative === null || !(usdPerNative > 0)) throw new Error(`no USD price of chain ${this.options.network.chainId}'s native token`);
    if (!(await this.deepEnough(token, usdPerNative))) return null;
    const nativeAtoms = (atoms * price) / PRICE_SCALE;
    return (Number(nativeAtoms) / 1e18) * usdPerNative;
  }

  /** The sell token's native price (scaled) in the auction of the trade's block, or null. */
  private async auctionPrice(token: Address, trade: TradeRef): Promise<bigint | null> {
    const { db, network } = this.options;
    const key = token.toLowerCase();
    const own = trade.txHash
      ? await sql<{ price: string | null }>`
          select sc.auction->'prices'->>${key} as price
          from settlements s join solver_competitions sc on sc.chain_id = s.chain_id and sc.auction_id = s.auction_id
          where s.chain_id = ${network.chainId} and s.tx_hash = ${toBytes(trade.txHash)}
          limit 1`.execute(db)
      : null;
    let raw = own?.rows[0]?.price ?? null;
    if (raw === null) {
      const latest = await sql<{ price: string | null }>`
        select sc.auction->'prices'->>${key} as price
        from solver_competitions sc
        where sc.chain_id = ${network.chainId} and sc.start_block <= ${trade.blockNumber}
          and sc.auction->'prices'->>${key} is not null
        order by sc.start_block desc limit 1`.execute(db);
      raw = latest.rows[0]?.price ?? null;
    }
    if (raw === null || !/^\d{1,78}$/.test(raw)) return null;
    const price = BigInt(raw);
    return price > 0n ? price : null;
  }

  private async deepEnough(token: Address, usdPerNative: number): Promise<boolean> {
    const { network, minLiquidityUsd } = this.options;
    if (!network.amm || !network.wrappedNative || minLiquidityUsd <= 0) return true;
    const floor = roundTwoDigits(BigInt(Math.ceil((minLiquidityUsd / usdPerNative) * 1e6)) * 10n ** 12n);
    if (!this.depth || this.depth.floor !== floor) {
      this.depth = {
        floor,
        source: new AmmNativePrice({ client: network.client as never, factory: network.amm.factory, wrappedNative: network.wrappedNative, connectors: network.connectors, minNativeLiquidity: floor, ttlMs: 60_000 }),
      };
    }
    return (await this.depth.source.nativePrice(token)) !== null;
  }
}

/** `n` rounded up to two significant digits (a floor that moves with the native price by a hair keeps its cache). */
function roundTwoDigits(n: bigint): bigint {
  let unit = 1n;
  while (n / unit >= 100n) unit *= 10n;
  return ((n + unit - 1n) / unit) * unit;
}
