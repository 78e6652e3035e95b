import { encodeAbiParameters, keccak256, type Hex, type TypedDataDefinition } from 'viem';
import { ZERO_ADDRESS } from './contract-addresses.js';
import { ORDER_STRING_HASHES, ORDER_TYPE_HASH, ORDER_TYPES, type Order } from './order.js';
import type { OrderDomain } from './order-domain.js';
import { typedDataDigest } from './typed-data-digest.js';

const ORDER_STRUCT_LAYOUT = [
  { type: 'bytes32' },
  { type: 'address' },
  { type: 'address' },
  { type: 'address' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'uint32' },
  { type: 'bytes32' },
  { type: 'uint256' },
  { type: 'bytes32' },
  { type: 'bool' },
  { type: 'bytes32' },
  { type: 'bytes32' },
] as const;

/**
 * EIP-712 hashStruct of an order (GPv2Order.hash without the domain). A `null` receiver is hashed as
 * the zero address; the `string` fields enter as keccak256 of their text.
 *
 * @example
 * hashOrderStruct(order) // '0x7d9bf070…' for the §6.6 test order
 */
export function hashOrderStruct(order: Order): Hex {
  return keccak256(
    encodeAbiParameters(ORDER_STRUCT_LAYOUT, [
      ORDER_TYPE_HASH,
      order.sellToken,
      order.buyToken,
      order.receiver ?? ZERO_ADDRESS,
      order.sellAmount,
      order.buyAmount,
      order.validTo,
      order.appData,
      order.feeAmount,
      ORDER_STRING_HASHES[order.kind],
      order.partiallyFillable,
      ORDER_STRING_HASHES[order.sellTokenBalance],
      ORDER_STRING_HASHES[order.buyTokenBalance],
    ]),
  );
}

/**
 * The digest the owner signs (and the first 32 bytes of the order UID). `domain` is a domain object
 * or its precomputed separator (cheaper when hashing many orders).
 *
 * @example
 * orderDigest(order, orderDomain(1))
 * orderDigest(order, domainSeparator(1)) // same value
 */
export function orderDigest(order: Order, domain: OrderDomain | Hex): Hex {
  return typedDataDigest(domain, hashOrderStruct(order));
}

/**
 * The order as viem typed data, ready for `walletClient.signTypedData` / `account.signTypedData`.
 *
 * @example
 * const signature = await account.signTypedData(orderTypedData(order, orderDomain(31337)))
 */
export function orderTypedData(order: Order, domain: OrderDomain): TypedDataDefinition<typeof ORDER_TYPES, 'Order'> {
  return {
    domain,
    types: ORDER_TYPES,
    primaryType: 'Order',
    message: { ...order, receiver: order.receiver ?? ZERO_ADDRESS },
  };
}
