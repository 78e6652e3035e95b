/**
 * What the market services report besides an answer; the routes map it onto the auxiliary `{message}` envelope:
 * NotFound → 404, Invalid → 400, Unavailable → 500 (spec §7: "server issue" / "service error").
 */
export type MarketErrorKind = 'NotFound' | 'Invalid' | 'Unavailable';

export class MarketError extends Error {
  constructor(readonly kind: MarketErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MarketError';
  }
}

export const MARKET_ERROR_STATUS: Readonly<Record<MarketErrorKind, number>> = { NotFound: 404, Invalid: 400, Unavailable: 500 };
