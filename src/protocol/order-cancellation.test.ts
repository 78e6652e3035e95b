import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashMessage, hashTypedData, keccak256, stringToHex, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import {
  ORDER_CANCELLATION_TYPE_HASH,
  ORDER_CANCELLATION_TYPE_STRING,
  ORDER_CANCELLATIONS_TYPE_HASH,
  ORDER_CANCELLATIONS_TYPE_STRING,
  hashOrderCancellationStruct,
  hashOrderCancellationsStruct,
  orderCancellationDigest,
  orderCancellationsDigest,
  orderCancellationTypedData,
  orderCancellationsTypedData,
} from './order-cancellation.js';
import { domainSeparator, orderDomain } from './order-domain.js';
import { recoverCancellationSigner } from './recover-cancellation-signer.js';
import { CANCELLATION_VECTOR, DEV_ACCOUNT_0, UID_VECTOR } from './test-vectors.js';

const uid11 = `0x${'11'.repeat(56)}` as Hex;
const uid22 = `0x${'22'.repeat(56)}` as Hex;
const signer = DEV_ACCOUNT_0.address.toLowerCase();

describe('cancellation signing (§6.7)', () => {
  it('type hashes match the reference and keccak of the type strings', () => {
    assert.equal(keccak256(stringToHex(ORDER_CANCELLATION_TYPE_STRING)), '0x7b41b3a6e2b3cae020a3b2f9cdc997e0d420643957e7fea81747e984e47c88ec');
    assert.equal(keccak256(stringToHex(ORDER_CANCELLATIONS_TYPE_STRING)), '0x4c89efb91ae246f78d2fe68b47db2fa1444a121a4f2dc3fda7a5a408c2e3588e');
    assert.equal(ORDER_CANCELLATION_TYPE_HASH, keccak256(stringToHex(ORDER_CANCELLATION_TYPE_STRING)));
    assert.equal(ORDER_CANCELLATIONS_TYPE_HASH, keccak256(stringToHex(ORDER_CANCELLATIONS_TYPE_STRING)));
  });

  it('batch struct hash of [] matches the reference', () => {
    assert.equal(hashOrderCancellationsStruct([]), '0x56acdb3034898c6c23971cb3f92c32a4739e89a13c85282547025583a93911bd');
  });

  it('batch struct hash of [0x11×56, 0x22×56] matches the reference and depends on order', () => {
    assert.equal(hashOrderCancellationsStruct([uid11, uid22]), '0x405f6cb53d87901a5385a824a99c94b43146547f5ea3623f8d2f50b925e97a8b');
    assert.notEqual(hashOrderCancellationsStruct([uid22, uid11]), '0x405f6cb53d87901a5385a824a99c94b43146547f5ea3623f8d2f50b925e97a8b');
  });

  it('single-cancellation vector: struct hash and digest', () => {
    assert.equal(hashOrderCancellationStruct(CANCELLATION_VECTOR.orderUid), CANCELLATION_VECTOR.structHash);
    assert.equal(orderCancellationDigest(CANCELLATION_VECTOR.orderUid, CANCELLATION_VECTOR.domainSeparator), CANCELLATION_VECTOR.digest);
  });

  it('single-cancellation vector: deterministic signatures of dev account 0', async () => {
    const eip712 = await sign({ hash: CANCELLATION_VECTOR.digest, privateKey: DEV_ACCOUNT_0.privateKey, to: 'hex' });
    assert.ok(eip712.startsWith('0xf2c69310') && eip712.endsWith('30231b'));
    assert.equal(eip712, CANCELLATION_VECTOR.eip712Signature);
    const ethsign = await sign({ hash: hashMessage({ raw: CANCELLATION_VECTOR.digest }), privateKey: DEV_ACCOUNT_0.privateKey, to: 'hex' });
    assert.ok(ethsign.startsWith('0x5fef0aed') && ethsign.endsWith('d24eb41b'));
    assert.equal(ethsign, CANCELLATION_VECTOR.ethsignSignature);
  });

  it('single-cancellation vector: both signatures recover the signer', async () => {
    const base = { domain: CANCELLATION_VECTOR.domainSeparator, orderUid: CANCELLATION_VECTOR.orderUid } as const;
    assert.equal(await recoverCancellationSigner({ ...base, scheme: 'eip712', signature: CANCELLATION_VECTOR.eip712Signature }), signer);
    assert.equal(await recoverCancellationSigner({ ...base, scheme: 'ethsign', signature: CANCELLATION_VECTOR.ethsignSignature }), signer);
  });

  it('the single-type signature does not verify under the batch type', async () => {
    const recovered = await recoverCancellationSigner({
      scheme: 'eip712',
      signature: CANCELLATION_VECTOR.eip712Signature,
      domain: CANCELLATION_VECTOR.domainSeparator,
      orderUids: [CANCELLATION_VECTOR.orderUid],
    });
    assert.notEqual(recovered, signer);
  });

  it('digests agree with viem hashTypedData for both types', () => {
    const domain = orderDomain(1);
    assert.equal(orderCancellationDigest(UID_VECTOR.uid, domain), hashTypedData(orderCancellationTypedData(UID_VECTOR.uid, domain)));
    for (const uids of [[], [uid11], [uid11, uid22, UID_VECTOR.uid]] as Hex[][]) {
      assert.equal(orderCancellationsDigest(uids, domain), hashTypedData(orderCancellationsTypedData(uids, domain)));
      assert.equal(orderCancellationsDigest(uids, domainSeparator(1)), orderCancellationsDigest(uids, domain));
    }
  });

  it('batch cancellations signed with typed data and as ethsign recover the signer', async () => {
    const domain = orderDomain(31337);
    const uids = [uid11, uid22];
    const digest = orderCancellationsDigest(uids, domain);
    const eip712 = await sign({ hash: digest, privateKey: DEV_ACCOUNT_0.privateKey, to: 'hex' });
    const ethsign = await sign({ hash: hashMessage({ raw: digest }), privateKey: DEV_ACCOUNT_0.privateKey, to: 'hex' });
    assert.equal(await recoverCancellationSigner({ scheme: 'eip712', signature: eip712, domain, orderUids: uids }), signer);
    assert.equal(await recoverCancellationSigner({ scheme: 'ethsign', signature: ethsign, domain, orderUids: uids }), signer);
    assert.notEqual(await recoverCancellationSigner({ scheme: 'eip712', signature: eip712, domain, orderUids: [uid11] }), signer);
  });
});
