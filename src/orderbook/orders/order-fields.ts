/**
 * The fields of a stored order as every reader sees them (order book, auction builder), and the one mapping
 * from the `orders` columns to them, so that column handling lives in one place.
 */
import type { Address, Hex } from 'viem';
import { fromNumeric, toHex, toHexOrNull } from '../../db/codec.js';

export type SigningSchemeName = 'eip712' | 'ethsign' | 'presign' | 'eip1271';
export type OrderClass = 'market' | 'limit' | 'liquidity';

export interface StoredOrderFields {
  uid: Hex;
  owner: Address;
  sellToken: Address;
  buyToken: Address;
  /** as signed (null: the owner receives) */
  receiver: Address | null;
  sellAmount: bigint;
  buyAmount: bigint;
  validTo: number;
  appData: Hex;
  feeAmount: bigint;
  kind: 'sell' | 'buy';
  partiallyFillable: boolean;
  signature: Hex;
  signingScheme: SigningSchemeName;
  sellTokenBalance: string;
  buyTokenBalance: string;
  class: OrderClass;
}

/** Sums of the order's indexed trades: sell amount including fees, buy amount, fees. */
export interface ExecutedAmounts {
  executedSell: bigint;
  executedBuy: bigint;
  executedFee: bigint;
}

/** The `orders` columns (snake case, as both engines return them). */
export interface OrderColumns {
  uid: Uint8Array;
  owner: Uint8Array;
  sell_token: Uint8Array;
  buy_token: Uint8Array;
  receiver: Uint8Array | null;
  sell_amount: string;
  buy_amount: string;
  valid_to: number | string;
  app_data: Uint8Array;
  fee_amount: string;
  kind: 'sell' | 'buy';
  partially_fillable: boolean;
  signature: Uint8Array;
  signing_scheme: SigningSchemeName;
  sell_token_balance: string;
  buy_token_balance: string;
  class: OrderClass;
}

export function orderFieldsFromColumns(row: OrderColumns): StoredOrderFields {
  return {
    uid: toHex(row.uid),
    owner: toHex(row.owner) as Address,
    sellToken: toHex(row.sell_token) as Address,
    buyToken: toHex(row.buy_token) as Address,
    receiver: toHexOrNull(row.receiver) as Address | null,
    sellAmount: fromNumeric(row.sell_amount),
    buyAmount: fromNumeric(row.buy_amount),
    validTo: Number(row.valid_to),
    appData: toHex(row.app_data),
    feeAmount: fromNumeric(row.fee_amount),
    kind: row.kind,
    partiallyFillable: row.partially_fillable,
    signature: toHex(row.signature),
    signingScheme: row.signing_scheme,
    sellTokenBalance: row.sell_token_balance,
    buyTokenBalance: row.buy_token_balance,
    class: row.class,
  };
}

export function executedAmountsFromColumns(row: { executed_sell: string | null; executed_buy: string | null; executed_fee: string | null }): ExecutedAmounts {
  return { executedSell: fromNumeric(row.executed_sell), executedBuy: fromNumeric(row.executed_buy), executedFee: fromNumeric(row.executed_fee) };
}
