import type { Address } from 'viem';
import { ProtocolError } from './protocol-error.js';

/** An input that is not a `0x`-prefixed 20-byte hex address. `field` names the offending input. */
export class AddressError extends ProtocolError<'invalidAddress'> {
  readonly field: string;

  constructor(field: string, message = `${field} must be a 0x-prefixed 20-byte hex address`) {
    super('invalidAddress', message);
    this.field = field;
  }
}

const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/**
 * Validates an address given in any case (lowercase, checksummed or mixed — like upstream, a wrong
 * checksum is not rejected) and returns it lowercase. The `0x` prefix is required.
 *
 * @example
 * normalizeAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 'owner')
 * // '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
 * normalizeAddress('70997970c51812dc3a010c7d01b50e0d17dc79c8', 'owner') // throws AddressError
 */
export function normalizeAddress(input: unknown, field: string): Address {
  if (typeof input !== 'string' || !ADDRESS_PATTERN.test(input)) throw new AddressError(field);
  return input.toLowerCase() as Address;
}
