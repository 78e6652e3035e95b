import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Address, Hex } from 'viem';
import { orderDigest } from './hash-order.js';
import { computeOrderUid, parseOrderUid, UidError } from './order-uid.js';
import { UID_VECTOR } from './test-vectors.js';

const hexBytes = (length: number) =>
  fc.uint8Array({ minLength: length, maxLength: length }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);

describe('order UID (§6.6)', () => {
  it('reproduces the reference UID from the test order', () => {
    const digest = orderDigest(UID_VECTOR.order, UID_VECTOR.domainSeparator);
    assert.equal(computeOrderUid(digest, UID_VECTOR.owner, UID_VECTOR.order.validTo), UID_VECTOR.uid);
  });

  it('parses the reference UID into digest, lowercase owner and validTo', () => {
    const parts = parseOrderUid(UID_VECTOR.uid.toUpperCase().replace('0X', '0x'));
    assert.deepEqual(parts, {
      digest: UID_VECTOR.uid.slice(0, 66),
      owner: UID_VECTOR.owner.toLowerCase(),
      validTo: 0xffffffff,
    });
  });

  it('round-trips compute → parse (property)', () => {
    fc.assert(
      fc.property(hexBytes(32), hexBytes(20), fc.integer({ min: 0, max: 0xffffffff }), (digest, owner, validTo) => {
        const uid = computeOrderUid(digest, owner as Address, validTo);
        assert.match(uid, /^0x[0-9a-f]{112}$/);
        assert.deepEqual(parseOrderUid(uid), { digest, owner, validTo });
      }),
    );
  });

  it('rejects malformed UIDs with UidError', () => {
    const bad = [UID_VECTOR.uid.slice(0, -2), `${UID_VECTOR.uid}00`, UID_VECTOR.uid.slice(2), `${UID_VECTOR.uid.slice(0, -1)}g`, '', '0x'];
    for (const uid of bad) {
      assert.throws(() => parseOrderUid(uid), (error: unknown) => error instanceof UidError && error.code === 'invalidUid', uid);
    }
  });

  it('rejects bad components with UidError', () => {
    const digest = UID_VECTOR.uid.slice(0, 66) as Hex;
    const expectCode = (code: string) => (error: unknown) => error instanceof UidError && error.code === code;
    assert.throws(() => computeOrderUid('0x1234', UID_VECTOR.owner, 1), expectCode('invalidDigest'));
    assert.throws(() => computeOrderUid(digest, '0x1234', 1), expectCode('invalidOwner'));
    assert.throws(() => computeOrderUid(digest, UID_VECTOR.owner, 2 ** 32), expectCode('invalidValidTo'));
    assert.throws(() => computeOrderUid(digest, UID_VECTOR.owner, -1), expectCode('invalidValidTo'));
    assert.throws(() => computeOrderUid(digest, UID_VECTOR.owner, 1.5), expectCode('invalidValidTo'));
  });
});
