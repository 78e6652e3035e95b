/**
 * Domain errors of the affiliate program; the routes map them onto `{message}` with the status of spec §7.
 */
export type AffiliateErrorKind = 'InvalidInput' | 'InvalidSignature' | 'Conflict' | 'NotFound' | 'Unavailable';

export class AffiliateError extends Error {
  constructor(readonly kind: AffiliateErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AffiliateError';
  }
}

export const AFFILIATE_ERROR_STATUS: Record<AffiliateErrorKind, number> = {
  InvalidInput: 400,
  InvalidSignature: 401,
  NotFound: 404,
  Conflict: 409,
  Unavailable: 502,
};
