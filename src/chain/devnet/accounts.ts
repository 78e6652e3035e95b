// The devnet's accounts: the first five of the standard test mnemonic, each with one role.
import { pbkdf2Sync } from 'node:crypto';
import { toHex } from 'viem';
import { HDKey, hdKeyToAccount } from 'viem/accounts';
import { DEV_MNEMONIC, type DevnetAccount, type DevnetRole } from './deployment.js';

/** Roles by mnemonic index. Traders are for people: after set-up nothing automatic sends from them. */
export const DEVNET_ROLES: readonly DevnetRole[] = ['trader', 'trader', 'solver', 'market-bot', 'deployer'];

/**
 * The BIP-39 seed of a mnemonic (no passphrase), by Node's native PBKDF2: the same bytes as viem's
 * `mnemonicToAccount` computes in JavaScript for every account (2 048 rounds of HMAC-SHA512 each time).
 */
function mnemonicSeed(mnemonic: string): Uint8Array {
  return pbkdf2Sync(Buffer.from(mnemonic.normalize('NFKD'), 'utf8'), Buffer.from('mnemonic', 'utf8'), 2048, 64, 'sha512');
}

export function deriveDevnetAccounts(mnemonic = DEV_MNEMONIC): DevnetAccount[] {
  const root = HDKey.fromMasterSeed(mnemonicSeed(mnemonic));
  return DEVNET_ROLES.map((role, index) => {
    const account = hdKeyToAccount(root, { addressIndex: index });
    const key = account.getHdKey().privateKey;
    if (!key) throw new Error(`could not derive the private key of dev account ${index}`);
    return { address: account.address, privateKey: toHex(key), role, index };
  });
}
