import { ProtocolError } from './protocol-error.js';

/** 2^256 − 1, the largest value of a Solidity `uint256`. */
export const MAX_UINT256 = (1n << 256n) - 1n;

export type AmountErrorKind = 'invalid' | 'overflow';

/**
 * A uint256 amount that is not a plain decimal string (`invalid`) or exceeds 2^256 − 1 (`overflow`).
 * `field` names the input so the HTTP layer can pick e.g. `SellAmountOverflow` vs `BuyAmountOverflow`.
 */
export class AmountError extends ProtocolError<AmountErrorKind> {
  readonly field: string;

  constructor(kind: AmountErrorKind, field: string, message: string) {
    super(kind, message);
    this.field = field;
  }

  /** Same as `code`. */
  get kind(): AmountErrorKind {
    return this.code;
  }
}

const DIGITS = /^[0-9]+$/;
const MAX_UINT256_DIGITS = 78;

/**
 * Parses a wire amount: a string of ASCII decimal digits only (leading zeros allowed; no sign,
 * decimal point, exponent, hex prefix or whitespace), at most 2^256 − 1.
 *
 * @example
 * parseUint256('1000000000000000000', 'sellAmount') // 1000000000000000000n
 * parseUint256('1e18', 'sellAmount')                // throws AmountError (code 'invalid')
 * parseUint256('2'.repeat(80), 'buyAmount')          // throws AmountError (code 'overflow')
 */
export function parseUint256(value: unknown, field: string): bigint {
  if (typeof value !== 'string' || !DIGITS.test(value)) {
    throw new AmountError('invalid', field, `${field} must be a decimal string of digits`);
  }
  const significant = value.replace(/^0+/, '');
  const parsed = significant.length > MAX_UINT256_DIGITS ? MAX_UINT256 + 1n : BigInt(value);
  if (parsed > MAX_UINT256) throw new AmountError('overflow', field, `${field} exceeds 2^256 - 1`);
  return parsed;
}

/**
 * Formats a uint256 amount as its decimal wire string.
 *
 * @example
 * formatAmount(10n ** 18n) // '1000000000000000000'
 */
export function formatAmount(value: bigint, field = 'amount'): string {
  if (value < 0n) throw new AmountError('invalid', field, `${field} must not be negative`);
  if (value > MAX_UINT256) throw new AmountError('overflow', field, `${field} exceeds 2^256 - 1`);
  return value.toString(10);
}
