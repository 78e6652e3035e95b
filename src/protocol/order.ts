/**
 * The CoW Protocol order as signed by its owner (the EIP-712 `Order` struct), plus its type data.
 */
import type { Address, Hex } from 'viem';

export type OrderKind = 'sell' | 'buy';
export type SellTokenBalance = 'erc20' | 'external' | 'internal';
export type BuyTokenBalance = 'erc20' | 'internal';

export interface Order {
  readonly sellToken: Address;
  readonly buyToken: Address;
  /** `null` means "the owner"; it is hashed as the zero address. */
  readonly receiver: Address | null;
  readonly sellAmount: bigint;
  readonly buyAmount: bigint;
  /** uint32 unix seconds. */
  readonly validTo: number;
  /** bytes32: keccak256 of the app-data document. */
  readonly appData: Hex;
  readonly feeAmount: bigint;
  readonly kind: OrderKind;
  readonly partiallyFillable: boolean;
  readonly sellTokenBalance: SellTokenBalance;
  readonly buyTokenBalance: BuyTokenBalance;
}

/** The EIP-712 type string of `Order`, fields in contract order. */
export const ORDER_TYPE_STRING =
  'Order(address sellToken,address buyToken,address receiver,uint256 sellAmount,uint256 buyAmount,uint32 validTo,bytes32 appData,uint256 feeAmount,string kind,bool partiallyFillable,string sellTokenBalance,string buyTokenBalance)';

/** keccak256(ORDER_TYPE_STRING). */
export const ORDER_TYPE_HASH: Hex = '0xd5a25ba2e97094ad7d83dc28a6572da797d6b3e7fc6663bd93efb789fc17e489';

/** The `Order` type in viem's `types` format (for `signTypedData` / `hashTypedData`). */
export const ORDER_TYPES = {
  Order: [
    { name: 'sellToken', type: 'address' },
    { name: 'buyToken', type: 'address' },
    { name: 'receiver', type: 'address' },
    { name: 'sellAmount', type: 'uint256' },
    { name: 'buyAmount', type: 'uint256' },
    { name: 'validTo', type: 'uint32' },
    { name: 'appData', type: 'bytes32' },
    { name: 'feeAmount', type: 'uint256' },
    { name: 'kind', type: 'string' },
    { name: 'partiallyFillable', type: 'bool' },
    { name: 'sellTokenBalance', type: 'string' },
    { name: 'buyTokenBalance', type: 'string' },
  ],
} as const;

/** keccak256 of the enum-like `string` field values, as they enter the struct hash. */
export const ORDER_STRING_HASHES = {
  sell: '0xf3b277728b3fee749481eb3e0b3b48980dbbab78658fc419025cb16eee346775',
  buy: '0x6ed88e868af0a1983e3886d5f3e95a2fafbd6c3450bc229e27342283dc429ccc',
  erc20: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9',
  external: '0xabee3b73373acd583a130924aad6dc38cfdc44ba0555ba94ce2ff63980ea0632',
  internal: '0x4ac99ace14ee0a5ef932dc609df0943ab7ac16b7583634612f8dc35a4289a6ce',
} as const satisfies Record<OrderKind | SellTokenBalance | BuyTokenBalance, Hex>;
