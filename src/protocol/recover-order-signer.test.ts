import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashMessage, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import { normalizeEcdsaSignature, SignatureError } from './ecdsa-signature.js';
import { orderDigest } from './hash-order.js';
import { recoverOrderSigner } from './recover-order-signer.js';
import { DEV_ACCOUNT_1, UID_VECTOR } from './test-vectors.js';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const digest = orderDigest(UID_VECTOR.order, UID_VECTOR.domainSeparator);
const owner = DEV_ACCOUNT_1.address.toLowerCase();
const withV = (signature: string, v: number) => `${signature.slice(0, 130)}${v.toString(16).padStart(2, '0')}`;
const isSignatureError = (code: string) => (error: unknown) => error instanceof SignatureError && error.code === code;

describe('order signatures (§6.4, §6.6)', () => {
  it('deterministic eip712 signature of dev account 1 reproduces the reference', async () => {
    const signature = await sign({ hash: digest, privateKey: DEV_ACCOUNT_1.privateKey, to: 'hex' });
    assert.ok(signature.startsWith('0x59c0f5c1'));
    assert.ok(signature.endsWith('ddeb71c'));
    assert.equal(signature, UID_VECTOR.eip712Signature);
  });

  it('deterministic ethsign signature of dev account 1 reproduces the reference', async () => {
    const signature = await sign({ hash: hashMessage({ raw: digest }), privateKey: DEV_ACCOUNT_1.privateKey, to: 'hex' });
    assert.ok(signature.startsWith('0xbf3bc5a9'));
    assert.ok(signature.endsWith('71afcc1b'));
    assert.equal(signature, UID_VECTOR.ethsignSignature);
  });

  it('recovers the owner (lowercase) for both schemes', async () => {
    assert.equal(await recoverOrderSigner({ scheme: 'eip712', signature: UID_VECTOR.eip712Signature, digest }), owner);
    assert.equal(await recoverOrderSigner({ scheme: 'ethsign', signature: UID_VECTOR.ethsignSignature, digest }), owner);
  });

  it('a signature under the wrong scheme recovers someone else', async () => {
    assert.notEqual(await recoverOrderSigner({ scheme: 'ethsign', signature: UID_VECTOR.eip712Signature, digest }), owner);
    assert.notEqual(await recoverOrderSigner({ scheme: 'eip712', signature: UID_VECTOR.ethsignSignature, digest }), owner);
  });

  it('a changed order recovers someone else', async () => {
    const other = orderDigest({ ...UID_VECTOR.order, buyAmount: UID_VECTOR.order.buyAmount + 1n }, UID_VECTOR.domainSeparator);
    assert.notEqual(await recoverOrderSigner({ scheme: 'eip712', signature: UID_VECTOR.eip712Signature, digest: other }), owner);
  });

  it('accepts v = 0/1 and normalises it to 27/28', async () => {
    const v0 = withV(UID_VECTOR.eip712Signature, 1); // reference v is 0x1c = 28
    assert.equal(normalizeEcdsaSignature(v0), UID_VECTOR.eip712Signature);
    assert.equal(normalizeEcdsaSignature(withV(UID_VECTOR.ethsignSignature, 0)), UID_VECTOR.ethsignSignature);
    assert.equal(await recoverOrderSigner({ scheme: 'eip712', signature: v0, digest }), owner);
    assert.equal(normalizeEcdsaSignature(UID_VECTOR.eip712Signature.toUpperCase().replace('0X', '0x')), UID_VECTOR.eip712Signature);
  });

  it('rejects any other v', async () => {
    for (const v of [2, 26, 29, 37, 38, 255]) {
      await assert.rejects(
        recoverOrderSigner({ scheme: 'eip712', signature: withV(UID_VECTOR.eip712Signature, v), digest }),
        isSignatureError('invalidV'),
        `v=${v}`,
      );
    }
  });

  it('rejects signatures that are not 65 bytes of hex', async () => {
    const sig = UID_VECTOR.eip712Signature;
    for (const bad of [sig.slice(0, -2), `${sig}00`, '0x', `0x${'00'.repeat(64)}`]) {
      await assert.rejects(recoverOrderSigner({ scheme: 'eip712', signature: bad, digest }), isSignatureError('invalidLength'));
    }
    for (const bad of [sig.slice(2), `${sig.slice(0, -3)}z1c`, `${sig}0`]) {
      await assert.rejects(recoverOrderSigner({ scheme: 'eip712', signature: bad, digest }), isSignatureError('invalidHex'));
    }
  });

  it('reports an unrecoverable signature (r = 0, s = 0) as SignatureError', async () => {
    const zero = `0x${'00'.repeat(64)}1b`;
    await assert.rejects(recoverOrderSigner({ scheme: 'eip712', signature: zero, digest }), isSignatureError('unrecoverable'));
    await assert.rejects(recoverOrderSigner({ scheme: 'ethsign', signature: zero, digest }), isSignatureError('unrecoverable'));
  });

  it('accepts the high-s twin of a signature like ecrecover does', async () => {
    const sig = UID_VECTOR.eip712Signature;
    const s = BigInt(`0x${sig.slice(66, 130)}`);
    const highS = (SECP256K1_N - s).toString(16).padStart(64, '0');
    const flippedV = sig.endsWith('1c') ? '1b' : '1c';
    const twin = `${sig.slice(0, 66)}${highS}${flippedV}` as Hex;
    assert.equal(await recoverOrderSigner({ scheme: 'eip712', signature: twin, digest }), owner);
  });
});
