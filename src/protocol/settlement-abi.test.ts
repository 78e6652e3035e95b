import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { toEventSelector, toEventSignature, toFunctionSignature, type AbiEvent, type AbiFunction } from 'viem';
import { GPV2_SETTLEMENT_ABI } from './gpv2-settlement-abi.js';
import { SETTLEMENT_ABI } from './settlement-abi.js';

const artifact = createRequire(import.meta.url)('@cowprotocol/contracts/lib/contracts/GPv2Settlement.json') as { abi: unknown[] };

const signature = (item: AbiFunction | AbiEvent) => (item.type === 'event' ? toEventSignature(item) : toFunctionSignature(item));
const names = (params: readonly { name?: string; indexed?: boolean }[]) => params.map((p) => `${p.name ?? ''}${p.indexed ? '*' : ''}`);

describe('GPv2Settlement ABI', () => {
  it('the exported full ABI equals the @cowprotocol/contracts artifact', () => {
    assert.deepEqual(GPV2_SETTLEMENT_ABI, artifact.abi);
  });

  it('has every fragment we need', () => {
    const expected = [
      'settle', 'setPreSignature', 'invalidateOrder', 'filledAmount', 'preSignature', 'domainSeparator', 'vaultRelayer',
      'Trade', 'Settlement', 'OrderInvalidated', 'PreSignature', 'Interaction',
    ];
    assert.deepEqual(SETTLEMENT_ABI.map((item) => item.name).sort(), expected.sort());
  });

  for (const fragment of SETTLEMENT_ABI) {
    it(`${fragment.type} ${fragment.name} matches the contract ABI`, () => {
      const reference = GPV2_SETTLEMENT_ABI.find((item) => item.type === fragment.type && 'name' in item && item.name === fragment.name) as
        | AbiFunction
        | AbiEvent
        | undefined;
      assert.ok(reference, `${fragment.name} not in the contract ABI`);
      assert.equal(signature(fragment as AbiFunction | AbiEvent), signature(reference));
      assert.deepEqual(names(fragment.inputs), names(reference.inputs));
      if (fragment.type === 'function' && reference.type === 'function') {
        assert.equal(fragment.stateMutability, reference.stateMutability);
        assert.deepEqual(fragment.outputs.map((o) => o.type), reference.outputs.map((o) => o.type));
      }
    });
  }

  it('event topics are the well-known ones', () => {
    const trade = SETTLEMENT_ABI.find((item) => item.name === 'Trade') as AbiEvent;
    assert.equal(toEventSignature(trade), 'Trade(address,address,address,uint256,uint256,uint256,bytes)');
    assert.equal(toEventSelector(trade), toEventSelector('Trade(address,address,address,uint256,uint256,uint256,bytes)'));
  });
});
