import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hashTypedData, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { hashOrderStruct, orderDigest, orderTypedData } from './hash-order.js';
import { ORDER_STRING_HASHES, ORDER_TYPE_HASH, ORDER_TYPE_STRING, ORDER_TYPES, type Order } from './order.js';
import { domainSeparator, orderDomain } from './order-domain.js';
import { UID_VECTOR } from './test-vectors.js';

describe('order struct hashing (§6.3, §6.6)', () => {
  it('Order type string and type hash match the reference', () => {
    assert.equal(
      ORDER_TYPE_STRING,
      'Order(address sellToken,address buyToken,address receiver,uint256 sellAmount,uint256 buyAmount,uint32 validTo,bytes32 appData,uint256 feeAmount,string kind,bool partiallyFillable,string sellTokenBalance,string buyTokenBalance)',
    );
    const fromTypes = `Order(${ORDER_TYPES.Order.map((field) => `${field.type} ${field.name}`).join(',')})`;
    assert.equal(fromTypes, ORDER_TYPE_STRING);
    assert.equal(keccak256(stringToHex(ORDER_TYPE_STRING)), '0xd5a25ba2e97094ad7d83dc28a6572da797d6b3e7fc6663bd93efb789fc17e489');
    assert.equal(ORDER_TYPE_HASH, keccak256(stringToHex(ORDER_TYPE_STRING)));
  });

  it('string field hashes match the reference and keccak of their text', () => {
    const expected = {
      sell: '0xf3b277728b3fee749481eb3e0b3b48980dbbab78658fc419025cb16eee346775',
      buy: '0x6ed88e868af0a1983e3886d5f3e95a2fafbd6c3450bc229e27342283dc429ccc',
      erc20: '0x5a28e9363bb942b639270062aa6bb295f434bcdfc42c97267bf003f272060dc9',
      external: '0xabee3b73373acd583a130924aad6dc38cfdc44ba0555ba94ce2ff63980ea0632',
      internal: '0x4ac99ace14ee0a5ef932dc609df0943ab7ac16b7583634612f8dc35a4289a6ce',
    };
    for (const [text, hash] of Object.entries(expected)) {
      assert.equal(keccak256(stringToHex(text)), hash, text);
      assert.equal(ORDER_STRING_HASHES[text as keyof typeof ORDER_STRING_HASHES], hash, text);
    }
  });

  it('reproduces the §6.6 struct hash and digest', () => {
    assert.equal(hashOrderStruct(UID_VECTOR.order), UID_VECTOR.structHash);
    assert.equal(orderDigest(UID_VECTOR.order, UID_VECTOR.domainSeparator), UID_VECTOR.uid.slice(0, 66));
  });

  it('a null receiver hashes as the zero address, unlike any other receiver', () => {
    const withNull: Order = { ...UID_VECTOR.order, receiver: null };
    const withZero: Order = { ...UID_VECTOR.order, receiver: '0x0000000000000000000000000000000000000000' };
    assert.equal(hashOrderStruct(withNull), hashOrderStruct(withZero));
    assert.notEqual(hashOrderStruct(withNull), UID_VECTOR.structHash);
  });

  it('digest with a domain object equals digest with its separator', () => {
    const domain = orderDomain(100);
    assert.equal(orderDigest(UID_VECTOR.order, domain), orderDigest(UID_VECTOR.order, domainSeparator(domain)));
  });

  it('agrees with viem hashTypedData for arbitrary orders (property)', () => {
    const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Address);
    const uint256 = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
    const order = fc.record<Order>({
      sellToken: address,
      buyToken: address,
      receiver: fc.option(address, { nil: null }),
      sellAmount: uint256,
      buyAmount: uint256,
      validTo: fc.integer({ min: 0, max: 0xffffffff }),
      appData: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex),
      feeAmount: uint256,
      kind: fc.constantFrom('sell', 'buy'),
      partiallyFillable: fc.boolean(),
      sellTokenBalance: fc.constantFrom('erc20', 'external', 'internal'),
      buyTokenBalance: fc.constantFrom('erc20', 'internal'),
    });
    fc.assert(
      fc.property(order, fc.integer({ min: 1, max: 2 ** 40 }), (o, chainId) => {
        const domain = orderDomain(chainId);
        assert.equal(orderDigest(o, domain), hashTypedData(orderTypedData(o, domain)));
      }),
      { numRuns: 200 },
    );
  });
});
