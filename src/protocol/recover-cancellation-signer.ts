import type { Address, Hex } from 'viem';
import { recoverEcdsaSigner } from './ecdsa-signature.js';
import { orderCancellationDigest, orderCancellationsDigest } from './order-cancellation.js';
import type { OrderDomain } from './order-domain.js';
import type { EcdsaSigningScheme } from './signing-scheme.js';

interface CancellationSignature {
  readonly scheme: EcdsaSigningScheme;
  /** 65 bytes r ‖ s ‖ v, v ∈ {0, 1, 27, 28}. */
  readonly signature: string;
  /** Domain object or precomputed domain separator. */
  readonly domain: OrderDomain | Hex;
}

/** Give `orderUid` for the single `OrderCancellation` type, `orderUids` for `OrderCancellations`. */
export type RecoverCancellationSignerParameters =
  | (CancellationSignature & { readonly orderUid: Hex; readonly orderUids?: undefined })
  | (CancellationSignature & { readonly orderUids: readonly Hex[]; readonly orderUid?: undefined });

/**
 * Recovers the lowercase signer of an off-chain cancellation (eip712 or ethsign). A single-order
 * endpoint should accept both types: try `{ orderUid }`, and if that is not the owner, `{ orderUids: [uid] }`.
 *
 * @example
 * await recoverCancellationSigner({ scheme: 'eip712', signature, domain: orderDomain(1), orderUids: [uid] })
 */
export function recoverCancellationSigner(parameters: RecoverCancellationSignerParameters): Promise<Address> {
  const digest =
    parameters.orderUids !== undefined
      ? orderCancellationsDigest(parameters.orderUids, parameters.domain)
      : orderCancellationDigest(parameters.orderUid, parameters.domain);
  return recoverEcdsaSigner({ scheme: parameters.scheme, signature: parameters.signature, digest });
}
