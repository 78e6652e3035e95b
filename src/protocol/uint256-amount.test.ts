import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AmountError, MAX_UINT256, formatAmount, parseUint256 } from './uint256-amount.js';

const TWO_256 = 1n << 256n;
const isAmountError = (code: 'invalid' | 'overflow', field = 'sellAmount') => (error: unknown) =>
  error instanceof AmountError && error.code === code && error.kind === code && error.field === field && error.message.includes(field);

describe('uint256 amounts', () => {
  it('MAX_UINT256 is 2^256 - 1', () => {
    assert.equal(MAX_UINT256.toString(), '115792089237316195423570985008687907853269984665640564039457584007913129639935');
  });

  it('parses plain decimal strings, leading zeros included', () => {
    assert.equal(parseUint256('0', 'sellAmount'), 0n);
    assert.equal(parseUint256('000123', 'sellAmount'), 123n);
    assert.equal(parseUint256('1000000000000000000', 'sellAmount'), 10n ** 18n);
    assert.equal(parseUint256(MAX_UINT256.toString(), 'sellAmount'), MAX_UINT256);
    assert.equal(parseUint256(`${'0'.repeat(100)}7`, 'sellAmount'), 7n);
  });

  it('round-trips formatAmount for every value in [0, 2^256) (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (value) => {
        const text = formatAmount(value);
        assert.match(text, /^(0|[1-9][0-9]*)$/);
        assert.equal(parseUint256(text, 'sellAmount'), value);
      }),
      { numRuns: 1000 },
    );
  });

  it('rejects non-canonical spellings as invalid, naming the field', () => {
    const bad = ['', ' ', '-1', '+1', '1.0', '1.', '.5', '0x10', '0X10', '1e18', '1E3', ' 1', '1 ', '1\n', '\t1', '1_000', '1,000', 'Infinity', 'NaN', '١٢', '１２', '0b1', '0o7'];
    for (const value of bad) assert.throws(() => parseUint256(value, 'sellAmount'), isAmountError('invalid'), JSON.stringify(value));
    for (const value of [1, 1n, null, undefined, {}, ['1'], true]) {
      assert.throws(() => parseUint256(value, 'buyAmount'), isAmountError('invalid', 'buyAmount'), String(value));
    }
  });

  it('rejects every string that is not all ASCII digits (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 0, maxLength: 20 }).filter((s) => !/^[0-9]+$/.test(s)),
        (value) => {
          assert.throws(() => parseUint256(value, 'sellAmount'), isAmountError('invalid'));
        },
      ),
    );
  });

  it('reports values above 2^256 - 1 as overflow', () => {
    assert.throws(() => parseUint256(TWO_256.toString(), 'sellAmount'), isAmountError('overflow'));
    assert.throws(() => parseUint256('9'.repeat(1000), 'buyAmount'), isAmountError('overflow', 'buyAmount'));
    fc.assert(
      fc.property(fc.bigInt({ min: TWO_256, max: 1n << 400n }), (value) => {
        assert.throws(() => parseUint256(value.toString(), 'sellAmount'), isAmountError('overflow'));
      }),
    );
  });

  it('formatAmount refuses values outside uint256', () => {
    assert.equal(formatAmount(0n), '0');
    assert.throws(() => formatAmount(-1n), (e: unknown) => e instanceof AmountError && e.code === 'invalid');
    assert.throws(() => formatAmount(TWO_256), (e: unknown) => e instanceof AmountError && e.code === 'overflow');
  });
});
