// The devnet's accounts: the first five of the standard test mnemonic, each with one role.
import { toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { DEV_MNEMONIC, type DevnetAccount, type DevnetRole } from './deployment.js';

/** Roles by mnemonic index. Traders are for people: after set-up nothing automatic sends from them. */
export const DEVNET_ROLES: readonly DevnetRole[] = ['trader', 'trader', 'solver', 'market-bot', 'deployer'];

export function deriveDevnetAccounts(mnemonic = DEV_MNEMONIC): DevnetAccount[] {
  return DEVNET_ROLES.map((role, index) => {
    const account = mnemonicToAccount(mnemonic, { addressIndex: index });
    const key = account.getHdKey().privateKey;
    if (!key) throw new Error(`could not derive the private key of dev account ${index}`);
    return { address: account.address, privateKey: toHex(key), role, index };
  });
}
