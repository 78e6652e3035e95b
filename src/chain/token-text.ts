/**
 * Decodes what a token's `symbol()` / `name()` returned: an ABI `string` (the standard) or a `bytes32`
 * (MKR, SAI and other early tokens), right-padded with zero bytes. Control characters are dropped.
 *
 * @example decodeTokenText('0x4d4b520000000000000000000000000000000000000000000000000000000000') === 'MKR'
 */
import { decodeAbiParameters, hexToBigInt, hexToBytes, type Hex } from 'viem';

function clean(bytes: Uint8Array): string | null {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  const decoded = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, end));
  // eslint-disable-next-line no-control-regex
  const text = decoded.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return text === '' ? null : text;
}

export function decodeTokenText(returnData: Hex): string | null {
  const size = (returnData.length - 2) / 2;
  if (size === 32) return clean(hexToBytes(returnData));
  if (size < 64) return null;
  try {
    const [value] = decodeAbiParameters([{ type: 'string' }], returnData);
    return clean(new TextEncoder().encode(value));
  } catch {
    return null;
  }
}

/** `decimals()` as a number, or null if the data is not a single word holding 0..255. */
export function decodeDecimals(returnData: Hex): number | null {
  if ((returnData.length - 2) / 2 < 32) return null;
  const value = hexToBigInt(`0x${returnData.slice(2, 66)}`);
  return value <= 255n ? Number(value) : null;
}

/** A uint256 result (balanceOf, allowance), or null when the data is too short. */
export function decodeUint256(returnData: Hex): bigint | null {
  if ((returnData.length - 2) / 2 < 32) return null;
  return hexToBigInt(`0x${returnData.slice(2, 66)}`);
}
