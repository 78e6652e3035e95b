/**
 * Conversions at the storage boundary: hex strings ↔ bytea, bigint ↔ numeric(78,0).
 * bytea comes back as Uint8Array from PGlite and Buffer from pg; both are Uint8Array, so we only rely on that.
 *
 * @example toHex(toBytes('0xAbC1')) === '0xabc1'
 */
import type { Hex } from 'viem';

export function toBytes(hex: string): Buffer {
  const clean = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  return Buffer.from(clean, 'hex');
}

export function toHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

export function toHexOrNull(bytes: Uint8Array | null | undefined): Hex | null {
  return bytes == null ? null : toHex(bytes);
}

/** numeric(78,0) parameter: always pass as a decimal string so no engine goes through a JS number. */
export function toNumeric(value: bigint): string {
  return value.toString(10);
}

export function fromNumeric(value: string | number | bigint | null): bigint {
  if (value === null) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  // numeric aggregates (sum) may come back as "123" or "123.000"
  const dot = value.indexOf('.');
  return BigInt(dot === -1 ? value : value.slice(0, dot));
}
