import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFunctionData, toEventSelector, toFunctionSelector, type Hex } from 'viem';
import { formatAbiItem } from 'viem/utils';
import { decodeEthFlowPlacementData, encodeEthFlowPlacementData, ETHFLOW_ABI, ethFlowOrderUid, WRAP_ALL_CALLDATA } from './ethflow.js';
import { orderDomain } from './order-domain.js';

// the reference's test vector (chain 31337, canonical settlement, production eth-flow address)
const VECTOR = {
  order: {
    buyToken: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    receiver: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    sellAmount: 10n ** 18n,
    buyAmount: 3_000_000_000n,
    appData: '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d',
    feeAmount: 0n,
    validTo: 1_900_000_000,
    partiallyFillable: false,
    quoteId: 123_456n,
  },
  weth: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  ethFlow: '0xba3cb449bd2b4adddbc894d8697f5170800eadec',
  uid: '0x1a9853864fd1f098d3230de1d7f42293fdcf7e116187e5a9d197cbd0a2cdf87fba3cb449bd2b4adddbc894d8697f5170800eadecffffffff',
  data: '0x000000000001e240713fb300',
} as const;

describe('eth-flow protocol', () => {
  it('has the production selectors, event topics and custom errors', () => {
    const signatures = Object.fromEntries(
      ETHFLOW_ABI.map((item) => {
        const text = formatAbiItem(item);
        const selector = item.type === 'event' ? toEventSelector(text) : toFunctionSelector(text.replace(/^error /, 'function '));
        return [item.name, selector];
      }),
    );
    assert.deepEqual(signatures, {
      createOrder: '0x322bba21',
      invalidateOrder: '0x7bc41b96',
      invalidateOrdersIgnoringNotAllowed: '0x4cb76498',
      orders: '0x9c3f1e90',
      isValidSignature: '0x1626ba7e',
      wrapAll: '0x4c84c1c8',
      wrap: '0xea598cb0',
      unwrap: '0xde0e9a3e',
      cowSwapSettlement: '0xec30bb88',
      wrappedNativeToken: '0x17fcb39b',
      OrderPlacement: '0xcf5f9de2984132265203b5c335b25727702ca77262ff622e136baa7362bf1da9',
      OrderInvalidation: '0xb8bad102ac8bbacfef31ff1c906ec6d951c230b4dce750bb0376b812ad35852a',
      OrderRefund: '0x195271068a288191e4b265c641a56b9832919f69e9e7d6c2f31ba40278aeb85a',
      IncorrectEthAmount: '0x8b6ebb4d',
      NotAllowedZeroSellAmount: '0xeaec5c9d',
      OrderIsAlreadyExpired: '0x89bb2601',
      OrderIsAlreadyOwned: '0x56a1d2b2',
      ReceiverMustBeSet: '0xefc9ccdf',
      NotAllowedToInvalidateOrder: '0xf8cc70ce',
      EthTransferFailed: '0x6d963f88',
    });
    assert.equal(encodeFunctionData({ abi: ETHFLOW_ABI, functionName: 'wrapAll' }), WRAP_ALL_CALLDATA);
  });

  it('computes the reference UID (digest ‖ contract ‖ ffffffff)', () => {
    assert.equal(ethFlowOrderUid(VECTOR.order, { ethFlow: VECTOR.ethFlow, wrappedNative: VECTOR.weth, domain: orderDomain(31337) }), VECTOR.uid);
  });

  it('encodes and decodes the 12-byte placement data, negative quote ids as two’s complement', () => {
    assert.equal(encodeEthFlowPlacementData({ quoteId: 123_456n, userValidTo: 1_900_000_000 }), VECTOR.data);
    assert.deepEqual(decodeEthFlowPlacementData(VECTOR.data), { quoteId: 123_456n, userValidTo: 1_900_000_000 });
    assert.deepEqual(decodeEthFlowPlacementData('0x00000000000000056553f100'), { quoteId: 5n, userValidTo: 1_700_000_000 });
    assert.deepEqual(decodeEthFlowPlacementData('0xffffffffffffffff00000000'), { quoteId: -1n, userValidTo: 0 });
    assert.equal(encodeEthFlowPlacementData({ quoteId: -1n, userValidTo: 0 }), '0xffffffffffffffff00000000');
  });

  it('refuses data of any other length', () => {
    for (const bad of ['0x', '0x00', '0x000000000001e240713fb30000', `0x${'00'.repeat(32)}`, '0xzz0000000001e240713fb300'] as Hex[]) {
      assert.equal(decodeEthFlowPlacementData(bad), null, bad);
    }
  });
});
