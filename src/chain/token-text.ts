/**
 * Decodes what a token's `symbol()` / `name()` returned: an ABI `string` (the standard) or a `bytes32`
 * (MKR, SAI and other early tokens), right-padded with zero bytes.
 *
 * A token's texts are chosen by whoever deployed it and flow into the API, the dashboard and notifications, so they
 * are made safe here, once: control characters (C0, C1), format characters (bidi overrides and isolates, zero-width
 * spaces and joiners, the BOM, soft hyphens) and line/paragraph separators are dropped (tabs and line breaks become spaces), whitespace runs collapse to
 * one space, and the text is cut to `maxChars` code points (64 for a symbol, 128 for a name). Only the bytes that can
 * make up that many characters are decoded, whatever length the contract claims.
 *
 * @example decodeTokenText('0x4d4b520000000000000000000000000000000000000000000000000000000000') === 'MKR'
 */
import { hexToBigInt, hexToBytes, type Hex } from 'viem';

/** longest symbol kept, in code points */
export const MAX_TOKEN_SYMBOL_CHARS = 64;
/** longest name kept, in code points */
export const MAX_TOKEN_NAME_CHARS = 128;

/** Cc (C0/C1 controls), Cf (bidi marks/overrides/isolates, zero-width space/joiners, BOM, ...), Zl, Zp */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
/** whitespace controls and separators: a space rather than nothing, so words stay apart */
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/gu;
/** UTF-8 needs at most 4 bytes per code point, plus slack for characters that are then dropped */
const bytesFor = (maxChars: number) => maxChars * 4 * 2;

/** Cleans and cuts a text already decoded (also for texts from other sources, such as token lists). */
export function sanitizeTokenText(raw: string, maxChars: number): string | null {
  const text = raw.replace(LINE_BREAKS, ' ').replace(UNSAFE, '').replace(/\s+/gu, ' ').trim();
  if (text === '') return null;
  const chars = Array.from(text);
  return chars.length <= maxChars ? text : chars.slice(0, maxChars).join('').trimEnd();
}

function fromBytes(bytes: Uint8Array, maxChars: number, cut: boolean): string | null {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  let decoded = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, end));
  // a character split by the cut decodes as U+FFFD; it is not part of the text
  if (cut) decoded = decoded.replace(/\uFFFD$/u, '');
  return sanitizeTokenText(decoded, maxChars);
}

/** `maxChars` defaults to the symbol's limit; pass MAX_TOKEN_NAME_CHARS for `name()`. */
export function decodeTokenText(returnData: Hex, maxChars: number = MAX_TOKEN_SYMBOL_CHARS): string | null {
  const size = (returnData.length - 2) / 2;
  if (!Number.isInteger(size)) return null;
  if (size === 32) return fromBytes(hexToBytes(returnData), maxChars, false);
  if (size < 64) return null;
  // ABI `string`: a head word with the offset of the tail, whose first word is the length in bytes
  const offset = hexToBigInt(`0x${returnData.slice(2, 66)}`);
  if (offset % 32n !== 0n || offset + 32n > BigInt(size)) return null;
  const start = Number(offset);
  const length = hexToBigInt(`0x${returnData.slice(2 + start * 2, 2 + (start + 32) * 2)}`);
  const available = BigInt(size - start - 32);
  if (length > available) return null;
  const cap = bytesFor(maxChars);
  const take = length > BigInt(cap) ? cap : Number(length);
  const from = 2 + (start + 32) * 2;
  const bytes = hexToBytes(`0x${returnData.slice(from, from + take * 2)}`);
  return fromBytes(bytes, maxChars, take < Number(length));
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
