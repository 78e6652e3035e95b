import type { Address, Hex } from 'viem';
import { recoverEcdsaSigner, type RecoverAddress } from './ecdsa-signature.js';
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
 * on a malformed or unrecoverable signature. (eip1271/presign owners are verified on chain.) `recover` runs the
 * curve arithmetic (default: on this thread).
 *
 * @example
 * const owner = await recoverOrderSigner({ scheme: 'eip712', signature, digest: orderDigest(order, domain) })
 */
export function recoverOrderSigner(parameters: RecoverOrderSignerParameters, recover?: RecoverAddress): Promise<Address> {
  return recoverEcdsaSigner(parameters, recover);
}
