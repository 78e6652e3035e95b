/**
 * Trades from indexed settlement `Trade` events (reference orderbook.md §3.7, §9.2), newest first, and the
 * total surplus of a user.
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DB } from '../../db/schema.js';
import { fromNumeric, toBytes, toHex } from '../../db/codec.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { TradeFeeReader } from './trade-fees.js';

export interface TradeFilter {
  owner?: Address;
  orderUid?: Hex;
}

export interface TradeRecord {
  blockNumber: number;
  logIndex: number;
  orderUid: Hex;
  owner: Address;
  sellToken: Address;
  buyToken: Address;
  sellAmount: string;
  sellAmountBeforeFees: string;
  buyAmount: string;
  txHash: Hex | null;
  executedProtocolFees: unknown[];
}

export class TradeService {
  constructor(private readonly deps: { chainId: number; db: Kysely<DB>; nativePrice?: (token: Address) => Promise<number | null> }) {}

  async list(filter: TradeFilter, page: { offset: number; limit: number } | null): Promise<TradeRecord[]> {
    if ((filter.owner === undefined) === (filter.orderUid === undefined)) {
      throw new OrderBookError('InvalidTradeFilter', 'Must specify exactly one of owner or orderUid.');
    }
    let query = this.deps.db
      .selectFrom('trades')
      .selectAll()
      .where('chain_id', '=', this.deps.chainId)
      .orderBy('block_number', 'desc')
      .orderBy('log_index', 'desc');
    // as production: the sender of an eth-flow order is its trader (the trade's owner is the contract)
    if (filter.owner) {
      const owner = toBytes(filter.owner);
      const chainId = this.deps.chainId;
      query = query.where((eb) =>
        eb.or([
          eb('owner', '=', owner),
          eb('order_uid', 'in', eb.selectFrom('ethflow_placements as sp').select('sp.order_uid').where('sp.chain_id', '=', chainId).where('sp.sender', '=', owner)),
        ]),
      );
    }
    if (filter.orderUid) query = query.where('order_uid', '=', toBytes(filter.orderUid));
    if (page) query = query.offset(page.offset).limit(page.limit);
    const rows = await query.execute();
    // each policy of the settling auction, read back from the executed amounts (issue 23)
    const fees = await new TradeFeeReader(this.deps).forOrders([...new Set(rows.map((r) => toHex(r.order_uid)))]);
    return rows.map((r) => {
      const charged = fees.get(`${toHex(r.order_uid)}:${toHex(r.tx_hash)}`);
      const sell = fromNumeric(r.sell_amount);
      const fee = fromNumeric(r.fee_amount);
      return {
        blockNumber: Number(r.block_number),
        logIndex: Number(r.log_index),
        orderUid: toHex(r.order_uid),
        owner: toHex(r.owner) as Address,
        sellToken: toHex(r.sell_token) as Address,
        buyToken: toHex(r.buy_token) as Address,
        sellAmount: sell.toString(),
        sellAmountBeforeFees: (sell - fee).toString(),
        buyAmount: fromNumeric(r.buy_amount).toString(),
        txHash: toHex(r.tx_hash),
        executedProtocolFees: (charged?.protocolFees ?? []).map(({ policy, amount, token }) => ({ policy, amount: amount.toString(), token })),
      };
    });
  }

  /**
   * Surplus of every trade of the user against its order's limit price, in native-token atoms (wei):
   * sell orders: bought − limit buy for the amount sold (buy token); buy orders: limit sell − sold (sell token).
   */
  async totalSurplus(user: Address): Promise<bigint> {
    const rows = await this.deps.db
      .selectFrom('trades as t')
      .innerJoin('orders as o', (j) => j.onRef('o.chain_id', '=', 't.chain_id').onRef('o.uid', '=', 't.order_uid'))
      .select([
        'o.kind', 'o.sell_amount as o_sell', 'o.buy_amount as o_buy', 'o.sell_token', 'o.buy_token',
        sql<string>`t.sell_amount - t.fee_amount`.as('sold'), 't.buy_amount as bought',
      ])
      .where('t.chain_id', '=', this.deps.chainId)
      .where('t.owner', '=', toBytes(user))
      .execute();
    let total = 0n;
    const prices = new Map<string, number | null>();
    const priceOf = async (token: Address) => {
      if (!prices.has(token)) prices.set(token, this.deps.nativePrice ? await this.deps.nativePrice(token).catch(() => null) : null);
      return prices.get(token) ?? null;
    };
    for (const r of rows) {
      const oSell = fromNumeric(r.o_sell);
      const oBuy = fromNumeric(r.o_buy);
      const sold = fromNumeric(r.sold);
      const bought = fromNumeric(r.bought);
      const surplus = tradeSurplus({ kind: r.kind, limitSell: oSell, limitBuy: oBuy, sold, bought });
      const token = toHex(r.kind === 'sell' ? r.buy_token : r.sell_token) as Address;
      if (surplus <= 0n) continue;
      const price = await priceOf(token);
      if (price === null) continue;
      total += BigInt(Math.floor(Number(surplus) * price));
    }
    return total;
  }
}

/**
 * Surplus of one trade against its order's limit price, in atoms of the surplus token: sell orders get it in the
 * buy token (bought − limit buy for the amount sold), buy orders in the sell token (limit sell − sold). Negative
 * or zero: none.
 *
 * @example tradeSurplus({ kind: 'sell', limitSell: 100n, limitBuy: 50n, sold: 100n, bought: 60n }) === 10n
 */
export function tradeSurplus(t: { kind: 'sell' | 'buy'; limitSell: bigint; limitBuy: bigint; sold: bigint; bought: bigint }): bigint {
  if (t.kind === 'sell') return t.limitSell === 0n ? 0n : t.bought - (t.sold * t.limitBuy) / t.limitSell;
  return t.limitBuy === 0n ? 0n : (t.bought * t.limitSell) / t.limitBuy - t.sold;
}
