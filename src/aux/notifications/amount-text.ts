/**
 * Token amounts for people: base units → a short decimal with the token's symbol ("0.1 WETH", "299.12 USDC").
 * Whole amounts keep at most 4 decimals, amounts below 1 keep 4 significant digits; trailing zeros are dropped.
 * A token without metadata shows its base units and a shortened address.
 *
 * @example amountText(299_123_456n, { symbol: 'USDC', decimals: 6 }) === '299.1235 USDC'
 */
import type { Address } from 'viem';

export interface TokenLabel {
  symbol: string | null;
  decimals: number;
}

export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** Rounds half up to `places` decimals of a value with `decimals` decimals. */
function roundTo(value: bigint, decimals: number, places: number): string {
  if (places >= decimals) {
    const text = value.toString().padStart(decimals + 1, '0');
    return decimals === 0 ? text : `${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
  }
  const unit = 10n ** BigInt(decimals - places);
  const rounded = (value + unit / 2n) / unit;
  const text = rounded.toString().padStart(places + 1, '0');
  return places === 0 ? text : `${text.slice(0, -places)}.${text.slice(-places)}`;
}

export function decimalText(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const one = 10n ** BigInt(decimals);
  let places = 4;
  if (abs < one && abs > 0n) {
    // 4 significant digits below 1
    const digits = abs.toString().length;
    places = Math.min(decimals, decimals - digits + 4);
  }
  let text = roundTo(abs, decimals, places);
  if (text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
  return negative ? `-${text}` : text;
}

export function amountText(value: bigint, token: TokenLabel | null, address?: Address): string {
  if (!token) return `${value} (base units of ${address ? shortAddress(address) : 'an unknown token'})`;
  return `${decimalText(value, token.decimals)} ${token.symbol ?? (address ? shortAddress(address) : '?')}`;
}
