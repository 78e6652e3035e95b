import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AddressError, normalizeAddress } from './normalize-address.js';

const CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const LOWER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

describe('normalizeAddress', () => {
  it('accepts checksummed, lowercase and uppercase-hex forms and returns lowercase', () => {
    assert.equal(normalizeAddress(CHECKSUMMED, 'owner'), LOWER);
    assert.equal(normalizeAddress(LOWER, 'owner'), LOWER);
    assert.equal(normalizeAddress(`0x${LOWER.slice(2).toUpperCase()}`, 'owner'), LOWER);
  });

  it('requires the 0x prefix, 40 hex digits and a string, naming the field', () => {
    const bad: unknown[] = [LOWER.slice(2), `0X${LOWER.slice(2)}`, `${LOWER}00`, LOWER.slice(0, -1), `${LOWER.slice(0, -1)}g`, ` ${LOWER}`, '', 1, null];
    for (const input of bad) {
      assert.throws(
        () => normalizeAddress(input, 'receiver'),
        (e: unknown) => e instanceof AddressError && e.code === 'invalidAddress' && e.field === 'receiver' && e.message.includes('receiver'),
        String(input),
      );
    }
  });

  it('is idempotent and case-insensitive (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.boolean(), (bytes, upper) => {
        const hex = Buffer.from(bytes).toString('hex');
        const out = normalizeAddress(`0x${upper ? hex.toUpperCase() : hex}`, 'a');
        assert.equal(out, `0x${hex}`);
        assert.equal(normalizeAddress(out, 'a'), out);
      }),
    );
  });
});
