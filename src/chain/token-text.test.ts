import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, stringToHex } from 'viem';
import { decodeDecimals, decodeTokenText, decodeUint256 } from './token-text.js';

describe('decodeTokenText', () => {
  it('decodes an ABI string', () => {
    assert.equal(decodeTokenText(encodeAbiParameters([{ type: 'string' }], ['USD Coin'])), 'USD Coin');
    assert.equal(decodeTokenText(encodeAbiParameters([{ type: 'string' }], ['Ünïcode ✓'])), 'Ünïcode ✓');
  });

  it('decodes a bytes32 right-padded with zeros (MKR style)', () => {
    assert.equal(decodeTokenText(stringToHex('MKR', { size: 32 })), 'MKR');
    assert.equal(decodeTokenText(stringToHex('Maker', { size: 32 })), 'Maker');
  });

  it('returns null for empty, short or malformed data and strips control characters', () => {
    assert.equal(decodeTokenText('0x'), null);
    assert.equal(decodeTokenText(`0x${'00'.repeat(32)}`), null);
    assert.equal(decodeTokenText(`0x${'ff'.repeat(40)}`), null);
    assert.equal(decodeTokenText(encodeAbiParameters([{ type: 'string' }], ['A\u0000B\u0007C'])), 'ABC');
  });
});

describe('decodeDecimals / decodeUint256', () => {
  it('accepts 0..255 and refuses larger or short words', () => {
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: 'uint8' }], [6])), 6);
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: 'uint256' }], [255n])), 255);
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: 'uint256' }], [256n])), null);
    assert.equal(decodeDecimals('0x12'), null);
    assert.equal(decodeUint256(encodeAbiParameters([{ type: 'uint256' }], [2n ** 256n - 1n])), 2n ** 256n - 1n);
    assert.equal(decodeUint256('0x'), null);
  });
});
