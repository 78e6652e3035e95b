/**
 * The networks the order book serves, as data: name ↔ chain id, contract addresses, wrapped native
 * token and native currency. All addresses are lowercase.
 *
 * Sources: spec network list; cowprotocol/contracts `networks.json`; `@cowprotocol/sdk-config`
 * (`WRAPPED_NATIVE_CURRENCIES`, chain details) for wrapped tokens and native symbols.
 */
import type { Address } from 'viem';
import { SETTLEMENT_ADDRESS, VAULT_RELAYER_ADDRESS } from './contract-addresses.js';

export type NetworkName =
  | 'mainnet'
  | 'xdai'
  | 'arbitrum_one'
  | 'base'
  | 'avalanche'
  | 'polygon'
  | 'lens'
  | 'bnb'
  | 'linea'
  | 'plasma'
  | 'ink'
  | 'sepolia'
  | 'devnet';

export interface NativeCurrency {
  readonly symbol: string;
  readonly decimals: number;
}

export interface Network {
  /** URL segment of the order-book API (`/{name}/api/v1/...`). */
  readonly name: NetworkName;
  readonly chainId: number;
  readonly settlement: Address;
  readonly vaultRelayer: Address;
  /**
   * Wrapped native token, or `null` when not known statically (devnet: deployed at run time, the
   * caller passes it in; lens: not known to us).
   */
  readonly wrappedNativeToken: Address | null;
  readonly nativeCurrency: NativeCurrency;
}

const ETH: NativeCurrency = { symbol: 'ETH', decimals: 18 };

/** Every network, the spec's twelve plus the embedded `devnet`. */
export const NETWORKS: readonly Network[] = [
  { name: 'mainnet', chainId: 1, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', nativeCurrency: ETH },
  { name: 'xdai', chainId: 100, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xe91d153e0b41518a2ce8dd3d7944fa863463a97d', nativeCurrency: { symbol: 'xDAI', decimals: 18 } },
  { name: 'arbitrum_one', chainId: 42161, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0x82af49447d8a07e3bd95bd0d56f35241523fbab1', nativeCurrency: ETH },
  { name: 'base', chainId: 8453, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0x4200000000000000000000000000000000000006', nativeCurrency: ETH },
  { name: 'avalanche', chainId: 43114, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xb31f66aa3c1e785363f0875a1b74e27b85fd66c7', nativeCurrency: { symbol: 'AVAX', decimals: 18 } },
  { name: 'polygon', chainId: 137, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270', nativeCurrency: { symbol: 'POL', decimals: 18 } },
  // Uncertain: lens is absent from networks.json and from the SDK's wrapped-token table; its native
  // currency is GHO (18 decimals) as far as we know, and we do not pin a wrapped token.
  { name: 'lens', chainId: 232, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: null, nativeCurrency: { symbol: 'GHO', decimals: 18 } },
  { name: 'bnb', chainId: 56, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c', nativeCurrency: { symbol: 'BNB', decimals: 18 } },
  { name: 'linea', chainId: 59144, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xe5d7c2a44ffddf6b295a15c148167daaaf5cf34f', nativeCurrency: ETH },
  // Less certain: WXPL taken from @cowprotocol/sdk-config, not from networks.json.
  { name: 'plasma', chainId: 9745, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0x6100e367285b01f48d07953803a2d8dca5d19873', nativeCurrency: { symbol: 'XPL', decimals: 18 } },
  // Less certain: ink is an OP-stack chain; WETH at the OP predeploy per @cowprotocol/sdk-config.
  { name: 'ink', chainId: 57073, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0x4200000000000000000000000000000000000006', nativeCurrency: ETH },
  { name: 'sepolia', chainId: 11155111, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: '0xfff9976782d46cc05630d1f6ebab18b2324d6b14', nativeCurrency: ETH },
  // The embedded anvil devnet: WETH9 is deployed at run time, so the caller supplies its address.
  { name: 'devnet', chainId: 31337, settlement: SETTLEMENT_ADDRESS, vaultRelayer: VAULT_RELAYER_ADDRESS, wrappedNativeToken: null, nativeCurrency: ETH },
];

/**
 * Looks a network up by its order-book name (exact, lowercase).
 *
 * @example
 * networkByName('xdai')?.chainId // 100
 */
export function networkByName(name: string): Network | undefined {
  return NETWORKS.find((network) => network.name === name);
}

/**
 * Looks a network up by chain id.
 *
 * @example
 * networkByChainId(8453)?.name // 'base'
 */
export function networkByChainId(chainId: number): Network | undefined {
  return NETWORKS.find((network) => network.chainId === chainId);
}

/**
 * Resolves a path/query parameter that is either a decimal chain id (no sign, no leading zeros) or a
 * network name (case-insensitive). Returns `undefined` for anything else.
 *
 * @example
 * parseChainParam('100')?.name     // 'xdai'
 * parseChainParam('mainnet')?.chainId // 1
 * parseChainParam(42161)?.name     // 'arbitrum_one'
 */
export function parseChainParam(param: string | number): Network | undefined {
  if (typeof param === 'number') return Number.isSafeInteger(param) ? networkByChainId(param) : undefined;
  if (/^[1-9][0-9]{0,15}$/.test(param)) return networkByChainId(Number(param));
  return networkByName(param.toLowerCase());
}

/**
 * The order-book name a chain is served under: its network's spec name, else one derived from the chain id (fork
 * mode on a chain batchbook does not know, which the start announces).
 *
 * @example
 * servedNetworkName(1)   // { name: 'mainnet', known: true }
 * servedNetworkName(777) // { name: 'chain_777', known: false }
 */
export function servedNetworkName(chainId: number): { name: string; known: boolean } {
  const known = networkByChainId(chainId);
  return known ? { name: known.name, known: true } : { name: `chain_${chainId}`, known: false };
}
