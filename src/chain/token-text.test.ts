import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, stringToHex, type Hex } from 'viem';
import { decodeDecimals, decodeTokenText, decodeUint256, MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from './token-text.js';

const abiString = (text: string) => encodeAbiParameters([{ type: 'string' }], [text]);

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

  it('drops bidi overrides and isolates, zero-width characters, C1 controls and line separators', () => {
    // "USDC" that would render reversed, with invisible joiners and a BOM between its letters
    assert.equal(decodeTokenText(abiString('\u202eU\u200bS\u200dD\ufeffC\u202c')), 'USDC');
    assert.equal(decodeTokenText(abiString('\u2066W\u2069E\u200eT\u200fH\u061c')), 'WETH');
    assert.equal(decodeTokenText(abiString('A\u0080B\u009bC\u00adD\u2060E\u180eF')), 'ABCDEF');
    assert.equal(decodeTokenText(abiString('Send\n\n\tto \u2028 0xabc\u2029')), 'Send to 0xabc');
    assert.equal(decodeTokenText(abiString('\u200b\u202e\u200d')), null, 'nothing visible is no text');
    assert.equal(decodeTokenText(stringToHex('\u202eMKR', { size: 32 })), 'MKR');
  });

  it('cuts a symbol to 64 and a name to 128 code points, decoding only that much of a huge string', () => {
    const huge = 'Ä'.repeat(1_000_000);
    assert.equal(decodeTokenText(abiString(huge)), 'Ä'.repeat(MAX_TOKEN_SYMBOL_CHARS));
    assert.equal(decodeTokenText(abiString(huge), MAX_TOKEN_NAME_CHARS), 'Ä'.repeat(MAX_TOKEN_NAME_CHARS));
    // astral characters count once and are never split into lone surrogates
    const emoji = decodeTokenText(abiString('🐄'.repeat(100)))!;
    assert.equal(Array.from(emoji).length, 64);
    assert.equal(emoji, '🐄'.repeat(64));
  });

  it('refuses an ABI string whose length or offset points past the data', () => {
    const good = abiString('USDC');
    const lying = `${good.slice(0, 66)}${(1000).toString(16).padStart(64, '0')}${good.slice(130)}` as Hex;
    assert.equal(decodeTokenText(lying), null);
    const offsetOut = `0x${(4096).toString(16).padStart(64, '0')}${good.slice(66)}` as Hex;
    assert.equal(decodeTokenText(offsetOut), null);
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
