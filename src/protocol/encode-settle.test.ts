import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFunctionData, keccak256, stringToHex, type Hex } from 'viem';
import { encodeSettle, type Settlement } from './encode-settle.js';
import { GPV2_SETTLEMENT_ABI } from './gpv2-settlement-abi.js';
import { encodeSettlementSignature } from './settlement-signature.js';
import { UID_VECTOR } from './test-vectors.js';
import { encodeTradeFlags } from './trade-flags.js';

const SETTLE_SIGNATURE =
  'settle(address[],uint256[],(uint256,uint256,address,uint256,uint256,uint32,bytes32,uint256,uint256,uint256,bytes)[],(address,uint256,bytes)[][3])';

const { order } = UID_VECTOR;
const settlement: Settlement = {
  tokens: [order.sellToken, order.buyToken],
  clearingPrices: [order.buyAmount, order.sellAmount],
  trades: [
    {
      sellTokenIndex: 0n,
      buyTokenIndex: 1n,
      receiver: order.receiver,
      sellAmount: order.sellAmount,
      buyAmount: order.buyAmount,
      validTo: order.validTo,
      appData: order.appData,
      feeAmount: order.feeAmount,
      flags: encodeTradeFlags({ ...order, signingScheme: 'eip712' }),
      executedAmount: 0n,
      signature: encodeSettlementSignature('eip712', UID_VECTOR.eip712Signature, UID_VECTOR.owner),
    },
  ],
  interactions: [[{ target: '0x0404040404040404040404040404040404040404', value: 1n, callData: '0xdeadbeef' }], [], []],
};

describe('encodeSettle', () => {
  it('starts with the settle selector', () => {
    const data = encodeSettle(settlement);
    assert.equal(data.slice(0, 10), keccak256(stringToHex(SETTLE_SIGNATURE)).slice(0, 10));
    assert.equal(data.slice(0, 10), '0x13d79a0b');
  });

  it('decodes with the contract ABI back to the same arguments', () => {
    const decoded = decodeFunctionData({ abi: GPV2_SETTLEMENT_ABI, data: encodeSettle(settlement) });
    assert.equal(decoded.functionName, 'settle');
    const [tokens, prices, trades, interactions] = decoded.args as unknown as [Hex[], bigint[], Record<string, unknown>[], unknown[][]];
    assert.deepEqual(tokens.map((t) => t.toLowerCase()), settlement.tokens);
    assert.deepEqual(prices, settlement.clearingPrices);
    assert.equal(trades.length, 1);
    const trade = trades[0]!;
    assert.equal(String(trade.receiver).toLowerCase(), order.receiver);
    assert.equal(trade.sellAmount, order.sellAmount);
    assert.equal(trade.validTo, order.validTo);
    assert.equal(trade.flags, 0n);
    assert.equal(trade.signature, UID_VECTOR.eip712Signature);
    assert.equal(interactions[0]!.length, 1);
    assert.equal(interactions[2]!.length, 0);
  });

  it('changes when a trade changes', () => {
    const changed: Settlement = { ...settlement, trades: [{ ...settlement.trades[0]!, executedAmount: 5n }] };
    assert.notEqual(encodeSettle(changed), encodeSettle(settlement));
  });
});
