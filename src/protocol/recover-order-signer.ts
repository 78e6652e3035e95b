import type { Address, Hex } from 'viem';
import { recoverEcdsaSigner } from './ecdsa-signature.js';
import type { EcdsaSigningScheme } from './signing-scheme.js';

export interface RecoverOrderSignerParameters {
  readonly scheme: EcdsaSigningScheme;
  /** 65 bytes r ‖ s ‖ v, v ∈ {0, 1, 27, 28}. */
  readonly signature: string;
  /** `orderDigest(order, domain)`. */
  readonly digest: Hex;
}

/**
 * Recovers the owner (lowercase) of an eip712 or ethsign order signature. Throws `SignatureError`
 * on a malformed or unrecoverable signature. (eip1271/presign owners are verified on chain.)
 *
 * @example
 * const owner = await recoverOrderSigner({ scheme: 'eip712', signature, digest: orderDigest(order, domain) })
 */
export function recoverOrderSigner(parameters: RecoverOrderSignerParameters): Promise<Address> {
  return recoverEcdsaSigner(parameters);
}
