import { keccak256, stringToBytes, type Hex } from 'viem';

/** The empty app-data document. */
export const EMPTY_APP_DATA_JSON = '{}';

/** keccak256('{}'). */
export const EMPTY_APP_DATA_HASH: Hex = '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d';

/** The all-zero appData, treated upstream as "empty app data" (pre-image `{}`). */
export const ZERO_APP_DATA: Hex = '0x0000000000000000000000000000000000000000000000000000000000000000';

/**
 * The order's `appData` for a document: keccak256 of its exact UTF-8 bytes. Never re-serialise the
 * JSON before hashing — whitespace and key order matter.
 *
 * @example
 * appDataHash('{}') // '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d'
 */
export function appDataHash(text: string): Hex {
  return keccak256(stringToBytes(text));
}
