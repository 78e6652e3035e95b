/**
 * The dashboard's reads across accounts (routes never run SQL): the latest orders, the latest trades with their
 * surplus against the order's limit price, and an order's lifecycle events. Everything else the dashboard shows
 * comes from the services the API already uses.
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DB } from '../db/schema.js';
import { fromNumeric, toBytes, toHex } from '../db/codec.js';
import { tradeSurplus } from '../orderbook/trades/trade-service.js';

export interface DashboardTrade {
  blockNumber: number;
  logIndex: number;
  orderUid: Hex;
  /** the trade's owner (for an eth-flow order: the contract) */
  owner: Address;
  /** who traded: the owner, or for an eth-flow order whoever placed it with createOrder */
  trader: Address;
  kind: 'sell' | 'buy';
  sellToken: Address;
  buyToken: Address;
  /** sell-token atoms executed, fee included */
  sellAmount: string;
  buyAmount: string;
  /** surplus against the order's limit price, in atoms of `surplusToken` (0 when none) */
  surplus: string;
  surplusToken: Address;
  txHash: Hex;
  timestamp: string | null;
}

export interface DashboardOrderEvent {
  timestamp: string;
  label: string;
  reason: string | null;
}

export class DashboardStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** UIDs of the most recently created orders of a chain, newest first. */
  async latestOrderUids(chainId: number, limit: number): Promise<Hex[]> {
    const rows = await this.db
      .selectFrom('orders')
      .select('uid')
      .where('chain_id', '=', chainId)
      .orderBy('created_at', 'desc')
      .orderBy('uid')
      .limit(limit)
      .execute();
    return rows.map((r) => toHex(r.uid));
  }

  /** The latest indexed trades of a chain, newest first, with their surplus. */
  async latestTrades(chainId: number, limit: number): Promise<DashboardTrade[]> {
    const rows = await this.db
      .selectFrom('trades as t')
      .leftJoin('orders as o', (j) => j.onRef('o.chain_id', '=', 't.chain_id').onRef('o.uid', '=', 't.order_uid'))
      .select([
        't.block_number', 't.log_index', 't.order_uid', 't.owner', 't.sell_token', 't.buy_token', 't.sell_amount', 't.buy_amount',
        't.fee_amount', 't.tx_hash', 't.block_timestamp', 'o.kind', 'o.sell_amount as o_sell', 'o.buy_amount as o_buy',
      ])
      // an eth-flow order's trader is whoever placed it (the trade's owner is the contract)
      .select((eb) =>
        eb.selectFrom('ethflow_placements as ef').select('ef.sender').whereRef('ef.chain_id', '=', 't.chain_id').whereRef('ef.order_uid', '=', 't.order_uid').limit(1).as('ef_sender'),
      )
      .where('t.chain_id', '=', chainId)
      .orderBy('t.block_number', 'desc')
      .orderBy('t.log_index', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => {
      const kind = r.kind ?? 'sell';
      const sellAmount = fromNumeric(r.sell_amount);
      const buyAmount = fromNumeric(r.buy_amount);
      const surplus =
        r.o_sell === null || r.o_buy === null
          ? 0n
          : tradeSurplus({ kind, limitSell: fromNumeric(r.o_sell), limitBuy: fromNumeric(r.o_buy), sold: sellAmount - fromNumeric(r.fee_amount), bought: buyAmount });
      return {
        blockNumber: Number(r.block_number),
        logIndex: Number(r.log_index),
        orderUid: toHex(r.order_uid),
        owner: toHex(r.owner) as Address,
        trader: toHex(r.ef_sender ?? r.owner) as Address,
        kind,
        sellToken: toHex(r.sell_token) as Address,
        buyToken: toHex(r.buy_token) as Address,
        sellAmount: sellAmount.toString(),
        buyAmount: buyAmount.toString(),
        surplus: (surplus > 0n ? surplus : 0n).toString(),
        surplusToken: toHex(kind === 'sell' ? r.buy_token : r.sell_token) as Address,
        txHash: toHex(r.tx_hash),
        timestamp: r.block_timestamp ? new Date(r.block_timestamp).toISOString() : null,
      };
    });
  }

  /** An order's lifecycle (created, ready, executing, traded, … with reasons), oldest first. */
  async orderEvents(chainId: number, uid: Hex): Promise<DashboardOrderEvent[]> {
    const rows = await this.db
      .selectFrom('order_events')
      .select(['timestamp', 'label', 'reason'])
      .where('chain_id', '=', chainId)
      .where('order_uid', '=', toBytes(uid))
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ timestamp: new Date(r.timestamp).toISOString(), label: r.label, reason: r.reason }));
  }
}
