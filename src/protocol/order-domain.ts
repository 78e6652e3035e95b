import { hashDomain, type Address, type Hex } from 'viem';
import { SETTLEMENT_ADDRESS } from './contract-addresses.js';

export const DOMAIN_NAME = 'Gnosis Protocol';
export const DOMAIN_VERSION = 'v2';

/** keccak256('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'). */
export const EIP712_DOMAIN_TYPE_HASH: Hex = '0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f';

/** The EIP-712 domain shared by orders and cancellations. */
export interface OrderDomain {
  readonly name: typeof DOMAIN_NAME;
  readonly version: typeof DOMAIN_VERSION;
  readonly chainId: number;
  readonly verifyingContract: Address;
}

const DOMAIN_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
} as const;

/**
 * Builds the signing domain for a chain; `settlement` defaults to the canonical GPv2Settlement
 * (pass `BARN_SETTLEMENT_ADDRESS` for staging).
 *
 * @example
 * orderDomain(1)
 * // { name: 'Gnosis Protocol', version: 'v2', chainId: 1, verifyingContract: '0x9008d19f...' }
 */
export function orderDomain(chainId: number, settlement: Address = SETTLEMENT_ADDRESS): OrderDomain {
  return { name: DOMAIN_NAME, version: DOMAIN_VERSION, chainId, verifyingContract: settlement };
}

/**
 * The EIP-712 domain separator (hashStruct of the domain), as returned by the settlement's
 * `domainSeparator()`. Accepts a domain or a chain id (+ optional settlement).
 *
 * @example
 * domainSeparator(1) // '0xc078f884a2676e1345748b1feace7b0abee5d00ecadb6e574dcdd109a63e8943'
 * domainSeparator(orderDomain(11155111))
 */
export function domainSeparator(domain: OrderDomain): Hex;
export function domainSeparator(chainId: number, settlement?: Address): Hex;
export function domainSeparator(domainOrChainId: OrderDomain | number, settlement?: Address): Hex {
  const domain = typeof domainOrChainId === 'number' ? orderDomain(domainOrChainId, settlement) : domainOrChainId;
  return hashDomain({ domain: { ...domain, chainId: BigInt(domain.chainId) }, types: DOMAIN_TYPES });
}
