import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak256, stringToHex, toFunctionSelector } from 'viem';
import { SignatureError } from './ecdsa-signature.js';
import { EIP1271_ABI, EIP1271_MAGIC_VALUE, encodeSettlementSignature } from './settlement-signature.js';
import { UID_VECTOR } from './test-vectors.js';

const owner = UID_VECTOR.owner;

describe('settlement signature encoding (§6.4)', () => {
  it('eip712 and ethsign keep the 65 bytes, with v normalised to 27/28', () => {
    const sig = UID_VECTOR.eip712Signature;
    assert.equal(encodeSettlementSignature('eip712', sig, owner), sig);
    assert.equal(encodeSettlementSignature('ethsign', `${sig.slice(0, 130)}01`, owner), sig);
    assert.throws(() => encodeSettlementSignature('eip712', sig.slice(0, 128), owner), SignatureError);
  });

  it('eip1271 is owner ‖ signature', () => {
    assert.equal(encodeSettlementSignature('eip1271', '0xC0FFEE', owner), `${owner.toLowerCase()}c0ffee`);
    assert.equal(encodeSettlementSignature('eip1271', '0x', owner), owner.toLowerCase());
    assert.throws(() => encodeSettlementSignature('eip1271', '0xabc', owner), SignatureError);
  });

  it('presign is the 20-byte owner', () => {
    const encoded = encodeSettlementSignature('presign', '0x', owner);
    assert.equal(encoded, owner.toLowerCase());
    assert.equal((encoded.length - 2) / 2, 20);
  });

  it('rejects a malformed owner', () => {
    assert.throws(() => encodeSettlementSignature('presign', '0x', '0x1234'), SignatureError);
  });

  it('EIP-1271 magic value is the isValidSignature selector', () => {
    const selector = keccak256(stringToHex('isValidSignature(bytes32,bytes)')).slice(0, 10);
    assert.equal(selector, '0x1626ba7e');
    assert.equal(EIP1271_MAGIC_VALUE, selector);
    assert.equal(toFunctionSelector(EIP1271_ABI[0]), selector);
  });
});
