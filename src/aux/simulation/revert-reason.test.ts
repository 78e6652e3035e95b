import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeErrorResult, parseAbi } from 'viem';
import { describeRevert } from './revert-reason.js';

describe('describeRevert', () => {
  it('decodes Error(string)', () => {
    const data = encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['DevnetToken: insufficient balance'] });
    assert.equal(describeRevert(data), 'DevnetToken: insufficient balance');
  });
  it('names Solidity panics', () => {
    const data = `0x4e487b71${encodeAbiParameters([{ type: 'uint256' }], [0x11n]).slice(2)}` as const;
    assert.equal(describeRevert(data), 'Panic(0x11): arithmetic overflow or underflow');
    const unknown = `0x4e487b71${encodeAbiParameters([{ type: 'uint256' }], [0x99n]).slice(2)}` as const;
    assert.equal(describeRevert(unknown), 'Panic(0x99)');
  });
  it('reports custom errors by selector', () => {
    const data = encodeErrorResult({ abi: parseAbi(['error InsufficientBalance(uint256 have, uint256 want)']), errorName: 'InsufficientBalance', args: [1n, 2n] });
    assert.equal(describeRevert(data), `custom error ${data.slice(0, 10)}`);
  });
  it('handles empty and malformed data', () => {
    assert.equal(describeRevert('0x'), 'execution reverted without a reason');
    assert.equal(describeRevert(null), 'execution reverted without a reason');
    assert.equal(describeRevert('0x08c379a0deadbeef'), 'execution reverted with a malformed Error(string)');
    assert.equal(describeRevert('0x1234'), 'execution reverted with data 0x1234');
  });
});
