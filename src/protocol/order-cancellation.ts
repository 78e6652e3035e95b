/**
 * Off-chain order cancellation typed data: `OrderCancellation(bytes orderUid)` (single, upstream
 * DELETE /orders/{uid}) and `OrderCancellations(bytes[] orderUids)` (batch; the SDK uses it for single
 * cancellations too). Same domain as orders.
 */
import { concat, encodeAbiParameters, keccak256, type Hex, type TypedDataDefinition } from 'viem';
import type { OrderDomain } from './order-domain.js';
import { typedDataDigest } from './typed-data-digest.js';

export const ORDER_CANCELLATION_TYPE_STRING = 'OrderCancellation(bytes orderUid)';
export const ORDER_CANCELLATION_TYPE_HASH: Hex = '0x7b41b3a6e2b3cae020a3b2f9cdc997e0d420643957e7fea81747e984e47c88ec';
export const ORDER_CANCELLATIONS_TYPE_STRING = 'OrderCancellations(bytes[] orderUids)';
export const ORDER_CANCELLATIONS_TYPE_HASH: Hex = '0x4c89efb91ae246f78d2fe68b47db2fa1444a121a4f2dc3fda7a5a408c2e3588e';

export const ORDER_CANCELLATION_TYPES = {
  OrderCancellation: [{ name: 'orderUid', type: 'bytes' }],
} as const;

export const ORDER_CANCELLATIONS_TYPES = {
  OrderCancellations: [{ name: 'orderUids', type: 'bytes[]' }],
} as const;

const TWO_WORDS = [{ type: 'bytes32' }, { type: 'bytes32' }] as const;

/**
 * hashStruct of `OrderCancellation(bytes orderUid)` = keccak(typehash ‖ keccak(uid)).
 *
 * @example
 * hashOrderCancellationStruct(uid)
 */
export function hashOrderCancellationStruct(orderUid: Hex): Hex {
  return keccak256(encodeAbiParameters(TWO_WORDS, [ORDER_CANCELLATION_TYPE_HASH, keccak256(orderUid)]));
}

/**
 * hashStruct of `OrderCancellations(bytes[] orderUids)` = keccak(typehash ‖ keccak(‖ keccak(uid_i))).
 *
 * @example
 * hashOrderCancellationsStruct([]) // '0x56acdb30…911bd'
 */
export function hashOrderCancellationsStruct(orderUids: readonly Hex[]): Hex {
  const itemsHash = keccak256(concat(orderUids.map((uid) => keccak256(uid))));
  return keccak256(encodeAbiParameters(TWO_WORDS, [ORDER_CANCELLATIONS_TYPE_HASH, itemsHash]));
}

/**
 * Signing digest of a single `OrderCancellation`.
 *
 * @example
 * orderCancellationDigest(uid, orderDomain(1))
 */
export function orderCancellationDigest(orderUid: Hex, domain: OrderDomain | Hex): Hex {
  return typedDataDigest(domain, hashOrderCancellationStruct(orderUid));
}

/**
 * Signing digest of a batch `OrderCancellations`.
 *
 * @example
 * orderCancellationsDigest([uid1, uid2], domainSeparator(1))
 */
export function orderCancellationsDigest(orderUids: readonly Hex[], domain: OrderDomain | Hex): Hex {
  return typedDataDigest(domain, hashOrderCancellationsStruct(orderUids));
}

/**
 * Batch cancellation as viem typed data (for signing in tests, bots and scripts).
 *
 * @example
 * await account.signTypedData(orderCancellationsTypedData([uid], orderDomain(31337)))
 */
export function orderCancellationsTypedData(
  orderUids: readonly Hex[],
  domain: OrderDomain,
): TypedDataDefinition<typeof ORDER_CANCELLATIONS_TYPES, 'OrderCancellations'> {
  return { domain, types: ORDER_CANCELLATIONS_TYPES, primaryType: 'OrderCancellations', message: { orderUids } };
}

/**
 * Single cancellation as viem typed data.
 *
 * @example
 * await account.signTypedData(orderCancellationTypedData(uid, orderDomain(31337)))
 */
export function orderCancellationTypedData(
  orderUid: Hex,
  domain: OrderDomain,
): TypedDataDefinition<typeof ORDER_CANCELLATION_TYPES, 'OrderCancellation'> {
  return { domain, types: ORDER_CANCELLATION_TYPES, primaryType: 'OrderCancellation', message: { orderUid } };
}
