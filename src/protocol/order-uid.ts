import { concat, numberToHex, type Address, type Hex } from 'viem';
import { ProtocolError } from './protocol-error.js';

/** Byte length of an order UID: digest (32) ‖ owner (20) ‖ validTo (4). */
export const ORDER_UID_LENGTH = 56;

export type UidErrorCode = 'invalidUid' | 'invalidDigest' | 'invalidOwner' | 'invalidValidTo';

/** A malformed order UID or UID component. */
export class UidError extends ProtocolError<UidErrorCode> {}

export interface OrderUidParts {
  /** The EIP-712 order digest (lowercase). */
  readonly digest: Hex;
  /** The owner (lowercase). */
  readonly owner: Address;
  readonly validTo: number;
}

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UID = /^0x[0-9a-fA-F]{112}$/;

/**
 * Packs digest ‖ owner ‖ validTo (uint32 big-endian) into the 56-byte UID, lowercase hex.
 *
 * @example
 * computeOrderUid(orderDigest(order, domain), owner, order.validTo)
 * // '0x0e45d31f…70997970c51812dc3a010c7d01b50e0d17dc79c8ffffffff'
 */
export function computeOrderUid(digest: Hex, owner: Address, validTo: number): Hex {
  if (!BYTES32.test(digest)) throw new UidError('invalidDigest', 'digest must be 32 bytes of hex');
  if (!ADDRESS.test(owner)) throw new UidError('invalidOwner', 'owner must be a 20-byte hex address');
  if (!Number.isInteger(validTo) || validTo < 0 || validTo > 0xffffffff) {
    throw new UidError('invalidValidTo', 'validTo must be an integer in [0, 2^32 - 1]');
  }
  return concat([digest, owner, numberToHex(validTo, { size: 4 })]).toLowerCase() as Hex;
}

/**
 * Splits a UID into its parts; accepts any hex case, requires `0x` and exactly 56 bytes.
 *
 * @example
 * parseOrderUid(uid) // { digest: '0x0e45…', owner: '0x7099…', validTo: 4294967295 }
 */
export function parseOrderUid(uid: string): OrderUidParts {
  if (!UID.test(uid)) {
    throw new UidError('invalidUid', `order UID must be 0x followed by ${ORDER_UID_LENGTH * 2} hex characters`);
  }
  const hex = uid.toLowerCase();
  return {
    digest: `0x${hex.slice(2, 66)}`,
    owner: `0x${hex.slice(66, 106)}`,
    validTo: Number.parseInt(hex.slice(106, 114), 16),
  };
}
