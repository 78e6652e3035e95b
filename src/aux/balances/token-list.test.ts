import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseTokenList, TokenListError } from './token-list.js';

const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE';

describe('parseTokenList', () => {
  it('trims, skips empty entries, lowercases and de-duplicates in order', () => {
    assert.deepEqual(parseTokenList(` ${USDC}, ,${USDC.toLowerCase()},${NATIVE},`), [USDC.toLowerCase(), NATIVE.toLowerCase()]);
  });

  it('requires at least one address', () => {
    for (const raw of [undefined, '', '  ', ',', ' , ,']) {
      assert.throws(() => parseTokenList(raw), (e: unknown) => e instanceof TokenListError && /at least one token address/.test(e.message), String(raw));
    }
  });

  it('names the malformed address', () => {
    for (const bad of ['0x123', 'A0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', '0xZZb86991c6218b36c1d19D4a2e9Eb0cE3606eB48', `${USDC}00`]) {
      assert.throws(() => parseTokenList(`${NATIVE},${bad}`), (e: unknown) => e instanceof TokenListError && e.message.includes(`"${bad}"`), bad);
    }
    const long = `0x${'g'.repeat(500)}`;
    assert.throws(() => parseTokenList(long), (e: unknown) => e instanceof TokenListError && e.message.length < 200);
  });

  it('caps the number of distinct tokens (duplicates do not count)', () => {
    const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
    const hundred = Array.from({ length: 100 }, (_, i) => addr(i + 1));
    assert.equal(parseTokenList([...hundred, ...hundred].join(',')).length, 100);
    assert.throws(() => parseTokenList([...hundred, addr(101)].join(',')), /at most 100/);
    assert.throws(() => parseTokenList([addr(1), addr(2), addr(3)].join(','), 2), /at most 2/);
  });

  it('property: any list of valid addresses in any case round-trips to its distinct lowercase forms', () => {
    const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).chain((bytes) =>
      fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }).map((upper) => {
        const hex = Buffer.from(bytes).toString('hex');
        return `0x${[...hex].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}`;
      }),
    );
    fc.assert(
      fc.property(fc.array(address, { minLength: 1, maxLength: 30 }), fc.array(fc.constantFrom('', ' ', '  '), { minLength: 1, maxLength: 3 }), (list, pads) => {
        const raw = list.map((a, i) => `${pads[i % pads.length]}${a}${pads[(i + 1) % pads.length]}`).join(',');
        const expected = [...new Set(list.map((a) => a.toLowerCase()))];
        assert.deepEqual(parseTokenList(raw), expected);
      }),
    );
  });
});
