import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { deriveDevnetAccounts, DEVNET_ROLES } from './accounts.js';
import { DEV_MNEMONIC } from './deployment.js';

describe('devnet accounts', () => {
  it('are the standard test mnemonic’s first accounts, as viem derives them, one role each', () => {
    const accounts = deriveDevnetAccounts();
    assert.equal(accounts.length, DEVNET_ROLES.length);
    accounts.forEach((a, index) => {
      const reference = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index });
      assert.equal(a.address, reference.address);
      assert.equal(a.privateKey, toHex(reference.getHdKey().privateKey!));
      assert.deepEqual([a.role, a.index], [DEVNET_ROLES[index], index]);
    });
    // anvil's well-known account 0
    assert.equal(accounts[0]!.address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });
});
