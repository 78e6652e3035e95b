// What the devnet deploys, where, and how that record is stored beside the chain state.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Address, Hex } from 'viem';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Canonical CoW Protocol addresses (same as on production chains). */
export const SETTLEMENT_ADDRESS: Address = '0x9008D19f58AAbD9eD0D60971565AA8510560ab41';
export const VAULT_RELAYER_ADDRESS: Address = '0xC92E8bdf79f0507f65a392b0ab4667716BFE0110';
export const AUTHENTICATOR_ADDRESS: Address = '0x2c4c28DDBdAc9C5E7055b4C863b72eA0149D8aFE';
export const BALANCER_VAULT_ADDRESS: Address = '0xBA12222222228d8Ba445958a75a0704d566BF2C8';
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Our HooksTrampoline (contracts/HooksTrampoline.sol): runs order hooks inside settlements; placed with anvil_setCode. */
export const HOOKS_TRAMPOLINE_ADDRESS: Address = '0x000000000000000000000000000000000000B00c';
/** Arachnid's deterministic-deployment proxy, pre-deployed by anvil. */
export const CREATE2_DEPLOYER_ADDRESS: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
/** bytes32("Mattresses in Berlin!"), the salt the settlement was deployed with on every chain. */
export const SETTLEMENT_SALT: Hex = '0x4d61747472657373657320696e204265726c696e210000000000000000000000';
/** EIP-712 domain separator of the settlement at SETTLEMENT_ADDRESS on chain 31337. */
export const DEVNET_DOMAIN_SEPARATOR: Hex = '0x28dc932d67cd79da82085f7fbb19d7c88f84894397b07917354176f60f0096d4';

export type DevnetRole = 'trader' | 'solver' | 'market-bot' | 'deployer';

export interface DevnetAccount {
  address: Address;
  privateKey: Hex;
  role: DevnetRole;
  /** Index in the standard test mnemonic (m/44'/60'/0'/0/index). */
  index: number;
}

export interface DevnetToken {
  symbol: string;
  name: string;
  address: Address;
  decimals: number;
}

export interface DevnetPool {
  address: Address;
  /** Sorted as in the pair contract (token0 < token1). */
  token0: Address;
  token1: Address;
}

export interface DevnetContracts {
  settlement: Address;
  vaultRelayer: Address;
  authenticator: Address;
  weth: Address;
  ammFactory: Address;
  ammRouter: Address;
  multicall3: Address;
  smartWallet: Address;
  /** the hooks trampoline the settlement calls to run order hooks */
  hooksTrampoline: Address;
  /** the eth-flow contract (sells native ETH through on-chain orders), against the settlement and WETH above */
  ethFlow: Address;
}

export interface DevnetDeployment {
  contracts: DevnetContracts;
  /** WETH first, then the minted tokens. */
  tokens: DevnetToken[];
  pools: DevnetPool[];
  accounts: DevnetAccount[];
}

/** Bump when the deployment procedure changes: a stored chain with another version is discarded and rebuilt. */
export const DEPLOYMENT_FORMAT_VERSION = 2;

export interface StoredDeployment {
  formatVersion: number;
  chainId: number;
  /** Hash of block 0: the chain's identity. */
  genesisHash: Hex;
  /** Timestamp of block 0. anvil must be restarted with the same `--timestamp`: otherwise, on loading the state,
   *  it creates a second, different block 0 next to the stored one, and which one wins after the next dump is
   *  arbitrary. */
  genesisTimestamp: number;
  createdAt: string;
  deployment: DevnetDeployment;
}

export function writeStoredDeployment(path: string, stored: StoredDeployment): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`);
  renameSync(tmp, path);
}

/** The stored record, or null if it is missing, unreadable or of another format version. */
export function readStoredDeployment(path: string): StoredDeployment | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  const s = parsed as Partial<StoredDeployment> | null;
  if (
    !s ||
    s.formatVersion !== DEPLOYMENT_FORMAT_VERSION ||
    typeof s.genesisHash !== 'string' ||
    typeof s.genesisTimestamp !== 'number' ||
    !s.deployment ||
    !Array.isArray(s.deployment.tokens) ||
    !Array.isArray(s.deployment.pools) ||
    !Array.isArray(s.deployment.accounts) ||
    typeof s.deployment.contracts?.settlement !== 'string'
  ) {
    return null;
  }
  return s as StoredDeployment;
}

export function accountByRole(deployment: DevnetDeployment, role: DevnetRole): DevnetAccount {
  const account = deployment.accounts.find((a) => a.role === role);
  if (!account) throw new Error(`devnet deployment has no ${role} account`);
  return account;
}
