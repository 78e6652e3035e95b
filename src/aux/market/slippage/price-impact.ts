/**
 * Price impact of an amount along a route of Uniswap-V2 pools, from their reserves (fee excluded): how much worse
 * than the spot price (after fee) the amount executes. 0 for nothing, approaching 1 as the amount drains a pool.
 *
 * Per hop, for an exact input x against reserves (R_in, R_out): impact = 0.997x / (R_in + 0.997x); for an exact
 * output y: impact = y / R_out (1 when y ≥ R_out). Along a route: 1 − Π(1 − impact_hop), the amounts carried
 * hop to hop with Uniswap's integer formulas.
 *
 * @example
 *   exactInImpact(10n ** 18n, [{ reserveIn: 1000n * 10n ** 18n, reserveOut: 3_000_000n * 10n ** 6n }]) // ≈ 0.000996
 */

export interface Hop {
  reserveIn: bigint;
  reserveOut: bigint;
}

export function exactInImpact(amountIn: bigint, hops: readonly Hop[]): number {
  if (amountIn <= 0n || hops.length === 0) return 0;
  let x = amountIn;
  let keep = 1;
  for (const { reserveIn, reserveOut } of hops) {
    if (reserveIn <= 0n || reserveOut <= 0n) return 1;
    const withFee = x * 997n;
    const denominator = reserveIn * 1000n + withFee;
    keep *= 1 - Number(withFee) / Number(denominator);
    x = (withFee * reserveOut) / denominator;
    if (x <= 0n) return 1;
  }
  return Math.min(1, Math.max(0, 1 - keep));
}

export function exactOutImpact(amountOut: bigint, hops: readonly Hop[]): number {
  if (amountOut <= 0n || hops.length === 0) return 0;
  let y = amountOut;
  let keep = 1;
  for (let i = hops.length - 1; i >= 0; i--) {
    const { reserveIn, reserveOut } = hops[i]!;
    if (reserveIn <= 0n || reserveOut <= 0n || y >= reserveOut) return 1;
    keep *= 1 - Number(y) / Number(reserveOut);
    y = (reserveIn * y * 1000n) / ((reserveOut - y) * 997n) + 1n;
  }
  return Math.min(1, Math.max(0, 1 - keep));
}
