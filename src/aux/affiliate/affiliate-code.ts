/**
 * Pure rules of the affiliate program: the code format, the registration's EIP-712 typed data, and the referrer
 * code carried by an order's app data.
 *
 * @example
 *   normalizeAffiliateCode('  my-code ');   // 'MY-CODE'
 *   normalizeAffiliateCode('abc');          // null (5–20 of A-Z 0-9 - _)
 *   affiliateTypedData('CoW Swap Affiliate', '0xabc…', 'MY-CODE').message.chainId; // 1n
 *   referrerCodeOf('{"metadata":{"referrer":{"code":"my-code"}}}'); // 'MY-CODE'
 */
import type { Address } from 'viem';

export const AFFILIATE_CODE_PATTERN = /^[A-Z0-9_-]{5,20}$/;

/** Trimmed and upper-cased code, or null when it is not 5–20 of `A-Z 0-9 - _`. */
export function normalizeAffiliateCode(input: string): string | null {
  const code = input.trim().toUpperCase();
  return AFFILIATE_CODE_PATTERN.test(code) ? code : null;
}

/** The chain id every registration message carries, whatever chain the wallet is on. */
export const AFFILIATE_MESSAGE_CHAIN_ID = 1n;

export const AFFILIATE_TYPES = {
  AffiliateCode: [
    { name: 'walletAddress', type: 'address' },
    { name: 'code', type: 'string' },
    { name: 'chainId', type: 'uint256' },
  ],
} as const;

/** What a wallet signs to register `code` (already normalised): domain `{name, version: "1"}` only. */
export function affiliateTypedData(domainName: string, walletAddress: Address, code: string) {
  return {
    domain: { name: domainName, version: '1' },
    types: AFFILIATE_TYPES,
    primaryType: 'AffiliateCode' as const,
    message: { walletAddress, code, chainId: AFFILIATE_MESSAGE_CHAIN_ID },
  };
}

/**
 * `metadata.referrer.code` of an app-data document (referrer schema v1.0.0, app-data v1.14+), normalised; null
 * when absent, malformed, or an older `referrer: {address}` document.
 */
export function referrerCodeOf(appDataText: string): string | null {
  let doc: unknown;
  try {
    doc = JSON.parse(appDataText);
  } catch {
    return null;
  }
  const referrer = (doc as { metadata?: { referrer?: unknown } } | null)?.metadata?.referrer;
  if (typeof referrer !== 'object' || referrer === null) return null;
  const code = (referrer as { code?: unknown }).code;
  return typeof code === 'string' ? normalizeAffiliateCode(code) : null;
}
