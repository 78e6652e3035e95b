/** The dashboard's number formatting (web/format.js, the module the browser loads). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error plain JavaScript served to the browser, without type declarations
import { formatUnits, shortHex, tokenLabel } from '../web/format.js';

describe('dashboard formatting', () => {
  it('shows atoms in whole token units with at most 6 decimals and thousands separators', () => {
    assert.equal(formatUnits('1500000', 6), '1.5');
    assert.equal(formatUnits('100000000000000000', 18), '0.1');
    assert.equal(formatUnits('1234567891234567890123', 18), '1,234.567891');
    assert.equal(formatUnits('5', 0), '5');
    assert.equal(formatUnits('0', 8), '0');
    assert.equal(formatUnits('123', undefined), '123', 'unknown decimals: atoms as they are');
  });

  it('shortens hashes and names tokens by symbol when known', () => {
    assert.equal(shortHex('0x' + 'ab'.repeat(20)), '0xababab…abab');
    const tokens = { '0x00000000000000000000000000000000000000aa': { symbol: 'WETH', decimals: 18 } };
    assert.equal(tokenLabel(tokens, '0x00000000000000000000000000000000000000AA'), 'WETH');
    assert.equal(tokenLabel(tokens, null), '?');
  });
});
