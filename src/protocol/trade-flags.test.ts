import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TradeFlagsError, decodeTradeFlags, encodeTradeFlags, type TradeFlags } from './trade-flags.js';

const flagsArbitrary = fc.record<TradeFlags>({
  kind: fc.constantFrom('sell', 'buy'),
  partiallyFillable: fc.boolean(),
  sellTokenBalance: fc.constantFrom('erc20', 'external', 'internal'),
  buyTokenBalance: fc.constantFrom('erc20', 'internal'),
  signingScheme: fc.constantFrom('eip712', 'ethsign', 'eip1271', 'presign'),
});

const base: TradeFlags = { kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20', signingScheme: 'eip712' };

describe('trade flags (§6.5)', () => {
  it('encodes each field at its bit position', () => {
    assert.equal(encodeTradeFlags(base), 0n);
    assert.equal(encodeTradeFlags({ ...base, kind: 'buy' }), 0b1n);
    assert.equal(encodeTradeFlags({ ...base, partiallyFillable: true }), 0b10n);
    assert.equal(encodeTradeFlags({ ...base, sellTokenBalance: 'external' }), 0b1000n);
    assert.equal(encodeTradeFlags({ ...base, sellTokenBalance: 'internal' }), 0b1100n);
    assert.equal(encodeTradeFlags({ ...base, buyTokenBalance: 'internal' }), 0b10000n);
    assert.equal(encodeTradeFlags({ ...base, signingScheme: 'ethsign' }), 0b0100000n);
    assert.equal(encodeTradeFlags({ ...base, signingScheme: 'eip1271' }), 0b1000000n);
    assert.equal(encodeTradeFlags({ ...base, signingScheme: 'presign' }), 0b1100000n);
    assert.equal(
      encodeTradeFlags({ kind: 'buy', partiallyFillable: true, sellTokenBalance: 'internal', buyTokenBalance: 'internal', signingScheme: 'presign' }),
      0x7fn,
    );
  });

  it('decode inverts encode (property)', () => {
    fc.assert(fc.property(flagsArbitrary, (flags) => assert.deepEqual(decodeTradeFlags(encodeTradeFlags(flags)), { ...flags })));
  });

  it('encode inverts decode on every 7-bit word, except bits 3,2 = 0,1 which the contract reads as erc20', () => {
    for (let word = 0n; word < 128n; word++) {
      const reencoded = encodeTradeFlags(decodeTradeFlags(word));
      if (((word >> 2n) & 0b11n) === 0b01n) assert.equal(reencoded, word & ~0b100n, `0x${word.toString(16)}`);
      else assert.equal(reencoded, word, `0x${word.toString(16)}`);
    }
    assert.equal(decodeTradeFlags(0b100n).sellTokenBalance, 'erc20');
  });

  it('rejects words with higher bits set, or negative', () => {
    for (const word of [128n, 1n << 8n, 1n << 255n, -1n]) {
      assert.throws(() => decodeTradeFlags(word), (e: unknown) => e instanceof TradeFlagsError && e.code === 'invalidFlags', String(word));
    }
  });

  it('rejects an unknown signing scheme', () => {
    assert.throws(() => encodeTradeFlags({ ...base, signingScheme: 'bogus' as never }), TradeFlagsError);
  });
});
