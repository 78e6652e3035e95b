import { hashMessage, recoverAddress, type Address, type Hex } from 'viem';
import { ProtocolError } from './protocol-error.js';
import type { EcdsaSigningScheme } from './signing-scheme.js';

export type SignatureErrorCode = 'invalidHex' | 'invalidLength' | 'invalidV' | 'unrecoverable' | 'unsupportedScheme';

/** A signature that cannot be parsed or from which no signer can be recovered. */
export class SignatureError extends ProtocolError<SignatureErrorCode> {}

const HEX = /^0x(?:[0-9a-fA-F]{2})*$/;

/**
 * Validates a 65-byte r ‖ s ‖ v signature and returns it lowercase with v ∈ {27, 28}
 * (v = 0/1 is mapped to 27/28; any other v is rejected). High-s values are accepted, like the
 * settlement contract's `ecrecover`.
 *
 * @example
 * normalizeEcdsaSignature('0x…00') // same r, s with v = 0x1b
 */
export function normalizeEcdsaSignature(signature: string): Hex {
  if (!HEX.test(signature)) throw new SignatureError('invalidHex', 'signature must be 0x-prefixed hex');
  if (signature.length !== 2 + 65 * 2) {
    throw new SignatureError('invalidLength', `ECDSA signature must be 65 bytes, got ${(signature.length - 2) / 2}`);
  }
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if (v !== 0 && v !== 1 && v !== 27 && v !== 28) {
    throw new SignatureError('invalidV', `ECDSA signature v must be 0, 1, 27 or 28, got ${v}`);
  }
  const normalizedV = v < 27 ? v + 27 : v;
  return `${signature.slice(0, 130).toLowerCase()}${normalizedV.toString(16)}` as Hex;
}

export interface RecoverEcdsaSignerParameters {
  readonly scheme: EcdsaSigningScheme;
  readonly signature: string;
  /** The 32-byte EIP-712 digest (order or cancellation). */
  readonly digest: Hex;
}

/**
 * The curve arithmetic of a recovery: the signer's address of a 32-byte hash and a normalized signature. The
 * default runs viem's `recoverAddress` on the calling thread; a caller may run it elsewhere (a worker thread).
 */
export type RecoverAddress = (hash: Hex, signature: Hex) => Promise<Address>;

const recoverOnThisThread: RecoverAddress = (hash, signature) => recoverAddress({ hash, signature });

/**
 * Recovers the lowercase signer of an EIP-712 digest: `eip712` signs the digest directly, `ethsign`
 * signs it as a personal message of its 32 raw bytes ("\x19Ethereum Signed Message:\n32" ‖ digest).
 *
 * @example
 * await recoverEcdsaSigner({ scheme: 'eip712', signature, digest }) // '0x7099…79c8'
 */
export async function recoverEcdsaSigner({ scheme, signature, digest }: RecoverEcdsaSignerParameters, recover: RecoverAddress = recoverOnThisThread): Promise<Address> {
  const normalized = normalizeEcdsaSignature(signature);
  let hash: Hex;
  if (scheme === 'eip712') hash = digest;
  else if (scheme === 'ethsign') hash = hashMessage({ raw: digest });
  else throw new SignatureError('unsupportedScheme', `scheme ${String(scheme)} has no ECDSA signer`);
  let signer: Address;
  try {
    signer = await recover(hash, normalized);
  } catch (error) {
    throw new SignatureError('unrecoverable', 'no signer can be recovered from the signature', { cause: error });
  }
  return signer.toLowerCase() as Address;
}
