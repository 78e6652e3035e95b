import { concat, type Address, type Hex } from 'viem';
import { normalizeEcdsaSignature, SignatureError } from './ecdsa-signature.js';
import type { SigningScheme } from './signing-scheme.js';

/** `bytes4(keccak256("isValidSignature(bytes32,bytes)"))`, returned by a valid EIP-1271 check. */
export const EIP1271_MAGIC_VALUE: Hex = '0x1626ba7e';

/** Minimal ABI for the EIP-1271 check the caller performs on the owner contract. */
export const EIP1271_ABI = [
  {
    type: 'function',
    name: 'isValidSignature',
    stateMutability: 'view',
    inputs: [
      { name: '_hash', type: 'bytes32' },
      { name: '_signature', type: 'bytes' },
    ],
    outputs: [{ name: 'magicValue', type: 'bytes4' }],
  },
] as const;

const HEX = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The `signature` bytes of a settlement trade (GPv2Signing encoding), lowercase:
 * eip712/ethsign → the 65-byte signature (v normalised to 27/28); eip1271 → owner ‖ signature;
 * presign → owner (the signature argument is ignored).
 *
 * @example
 * encodeSettlementSignature('presign', '0x', owner) // owner as 20 bytes
 * encodeSettlementSignature('eip1271', contractSig, safe) // safe ‖ contractSig
 */
export function encodeSettlementSignature(scheme: SigningScheme, signature: string, owner: Address): Hex {
  if (!ADDRESS.test(owner)) throw new SignatureError('invalidHex', 'owner must be a 20-byte hex address');
  switch (scheme) {
    case 'eip712':
    case 'ethsign':
      return normalizeEcdsaSignature(signature);
    case 'eip1271':
      if (!HEX.test(signature)) throw new SignatureError('invalidHex', 'signature must be 0x-prefixed hex');
      return concat([owner, signature as Hex]).toLowerCase() as Hex;
    case 'presign':
      return owner.toLowerCase() as Hex;
    default:
      throw new SignatureError('unsupportedScheme', `unknown signing scheme ${String(scheme)}`);
  }
}
