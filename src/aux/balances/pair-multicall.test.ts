import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeFunctionData, encodeFunctionResult, maxUint256, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../../chain/client.js';
import { multicall3Abi } from '../../chain/multicall.js';
import { ChainReader } from '../../chain/reader.js';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { NATIVE_TOKEN } from './balance-entry.js';
import { decodeAggregate3Uints, encodeAggregate3, MulticallPairReader, type Call } from './pair-multicall.js';

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => toHex(b) as Address);
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.tuple(address, address).map(([target, owner]) => ({ target, body: `70a08231${owner.slice(2).padStart(64, '0')}` })),
  fc.tuple(address, address, address).map(([target, owner, spender]) => ({ target, body: `dd62ed3e${owner.slice(2).padStart(64, '0')}${spender.slice(2).padStart(64, '0')}` })),
);

describe('aggregate3 by hand', () => {
  it('encodes exactly what viem encodes', () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 0, maxLength: 40 }), (calls) => {
        const viem = encodeFunctionData({
          abi: multicall3Abi,
          functionName: 'aggregate3',
          args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: `0x${c.body}` as Hex }))],
        });
        assert.equal(encodeAggregate3(calls), viem);
      }),
    );
  });

  it('decodes what viem encodes: uint256 answers, null for failures and short answers', () => {
    const result = fc.oneof(
      fc.bigInt({ min: 0n, max: maxUint256 }).map((v) => ({ success: true, returnData: toHex(v, { size: 32 }) as Hex, expected: v as bigint | null })),
      fc.constant({ success: false, returnData: '0x' as Hex, expected: null }),
      fc.constant({ success: false, returnData: toHex(5n, { size: 32 }) as Hex, expected: null }),
      fc.uint8Array({ maxLength: 31 }).map((b) => ({ success: true, returnData: toHex(b) as Hex, expected: null })),
      fc.tuple(fc.bigInt({ min: 0n, max: maxUint256 }), fc.uint8Array({ minLength: 1, maxLength: 70 })).map(([v, extra]) => ({
        success: true,
        returnData: `${toHex(v, { size: 32 })}${toHex(extra).slice(2)}` as Hex,
        expected: v as bigint | null,
      })),
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 30 }), (results) => {
        const data = encodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', result: results.map(({ success, returnData }) => ({ success, returnData })) });
        assert.deepEqual(decodeAggregate3Uints(data, results.length), results.map((r) => r.expected));
      }),
    );
  });

  it('rejects malformed results', () => {
    const data = encodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', result: [{ success: true, returnData: toHex(1n, { size: 32 }) }] });
    assert.throws(() => decodeAggregate3Uints(data, 2), /1 results for 2 calls/);
    assert.throws(() => decodeAggregate3Uints(data.slice(0, data.length - 40) as Hex, 1), /truncated/);
  });
});

describe('MulticallPairReader against the devnet', () => {
  let chain: TestDevnet;
  let reader: ChainReader;
  before(async () => {
    chain = await startTestDevnet({ blockTime: 0 });
    reader = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }));
  });
  after(async () => chain?.stop());

  it('answers exactly what ChainReader.balancesAndAllowances answers, across chunks, natives, non-tokens and a pinned block', async () => {
    const { tokens, accounts, contracts } = chain.devnet.deployment;
    const owners: Address[] = [...accounts.map((a) => a.address), contracts.smartWallet];
    while (owners.length < 60) owners.push(privateKeyToAddress(generatePrivateKey()));
    const targets: Address[] = [...tokens.map((t) => t.address), NATIVE_TOKEN, accounts[2].address, contracts.settlement];
    const pairs = owners.flatMap((owner) => targets.map((token) => ({ owner, token })));
    const block = await reader.blockNumber();
    const fast = new MulticallPairReader(reader, { chunkSize: 97, concurrency: 3 });
    const mine = await fast.balancesAndAllowances(pairs, contracts.vaultRelayer, { blockNumber: block });
    const reference = await reader.balancesAndAllowances(pairs, contracts.vaultRelayer, { blockNumber: block });
    assert.deepEqual(mine, reference);
    assert.ok(mine.some((r) => r.balance !== null && r.balance > 0n));
    assert.ok(mine.some((r) => r.balance === null), 'non-tokens answer null');
    assert.deepEqual(await fast.balancesAndAllowances([], contracts.vaultRelayer), []);
  });
});
