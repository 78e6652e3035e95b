/** How an order's signature is verified (GPv2Signing.Scheme, in contract enum order). */
export type SigningScheme = 'eip712' | 'ethsign' | 'eip1271' | 'presign';

/** The schemes whose signature is a 65-byte ECDSA signature recoverable off chain. */
export type EcdsaSigningScheme = 'eip712' | 'ethsign';

/** All schemes, indexed by their on-chain enum value (used in trade flags bits 5–6). */
export const SIGNING_SCHEMES = ['eip712', 'ethsign', 'eip1271', 'presign'] as const satisfies readonly SigningScheme[];
