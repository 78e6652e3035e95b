import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFunctionData, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { HOOKS_TRAMPOLINE_ABI, hookGas, orderHooksOf, permitGrant, trampolineGas, trampolineInteraction } from './order-hooks.js';

const OWNER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' as Address;
const RELAYER = '0xc92e8bdf79f0507f65a392b0ab4667716bfe0110' as Address;
const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3' as Address;
const permitAbi = parseAbi(['function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)']);
const permitCall = (spender: Address, value: bigint, deadline: bigint): Hex =>
  encodeFunctionData({ abi: permitAbi, functionName: 'permit', args: [OWNER, spender, value, deadline, 27, `0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`] });

describe('order hooks', () => {
  const doc = (hooks: unknown) => JSON.stringify({ metadata: { hooks } });

  it('reads the hooks of a document once, and none from an unreadable one', () => {
    const hooks = orderHooksOf(doc({ pre: [{ target: TOKEN, callData: '0x01', gasLimit: '50000' }], post: [{ target: OWNER, callData: '0x', gasLimit: '30000', dappId: 'cow.fi' }] }));
    assert.equal(hooks.pre.length, 1);
    assert.equal(hooks.post[0]!.dappId, 'cow.fi');
    assert.equal(hookGas(hooks), 80_000n);
    assert.deepEqual(orderHooksOf('not json'), { pre: [], post: [] });
    assert.deepEqual(orderHooksOf(null), { pre: [], post: [] });
    assert.equal(trampolineGas([]), 0n);
    assert.ok(trampolineGas(hooks.pre) > 50_000n, 'the trampoline adds its own gas');
  });

  it('wraps hooks into one trampoline call that carries the order uid and the hook type', () => {
    const uid = `0x${'ab'.repeat(56)}` as Hex;
    const hooks = [{ target: TOKEN, callData: '0x1234' as Hex, gasLimit: 60_000n, dappId: null }];
    const interaction = trampolineInteraction('0x000000000000000000000000000000000000b00c', uid, 'post', hooks);
    assert.equal(interaction.value, 0n);
    const { functionName, args } = decodeFunctionData({ abi: HOOKS_TRAMPOLINE_ABI, data: interaction.callData });
    assert.equal(functionName, 'execute');
    assert.equal(args[0], uid);
    assert.equal(args[1], 1);
    assert.deepEqual(args[2], [{ target: '0x5FbDB2315678afecb367f032d93F642f64180aa3', callData: '0x1234', gasLimit: 60_000n }]);
  });

  it('recognises a permit to the vault relayer for the owner and token, unexpired, the largest first', () => {
    const hook = (callData: Hex, target: Address = TOKEN) => ({ target, callData, gasLimit: 80_000n, dappId: null });
    const hooks = [hook(permitCall(RELAYER, 5n, 2000n)), hook(permitCall(RELAYER, 9n, 2000n)), hook('0xdeadbeef')];
    assert.equal(permitGrant(hooks, OWNER, TOKEN, RELAYER, 1000)?.value, 9n);
    assert.equal(permitGrant(hooks, OWNER, TOKEN, RELAYER, 2001), null, 'expired');
    assert.equal(permitGrant(hooks, TOKEN, TOKEN, RELAYER, 1000), null, 'another owner');
    assert.equal(permitGrant(hooks, OWNER, OWNER, RELAYER, 1000), null, 'another token');
    assert.equal(permitGrant([hook(permitCall(OWNER, 9n, 2000n))], OWNER, TOKEN, RELAYER, 1000), null, 'another spender');
  });
});
