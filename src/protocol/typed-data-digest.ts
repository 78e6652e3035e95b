import { concat, keccak256, type Hex } from 'viem';
import { domainSeparator, type OrderDomain } from './order-domain.js';

/**
 * The EIP-712 signing digest keccak256(0x1901 ‖ domainSeparator ‖ structHash) — what `signTypedData_v4`
 * signs. The domain may be given as a domain object or as its precomputed 32-byte separator.
 *
 * @example
 * typedDataDigest(domainSeparator(1), hashOrderStruct(order)) // === orderDigest(order, orderDomain(1))
 */
export function typedDataDigest(domain: OrderDomain | Hex, structHash: Hex): Hex {
  const separator = typeof domain === 'string' ? domain : domainSeparator(domain);
  return keccak256(concat(['0x1901', separator, structHash]));
}
