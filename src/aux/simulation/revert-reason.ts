/**
 * A readable reason from the return data of a reverted call: `Error(string)` gives its message,
 * `Panic(uint256)` the Solidity panic it stands for, any other 4-byte selector is reported as a custom error
 * (we have no ABI to decode it with; the raw data is reported beside the reason).
 *
 * @example
 *   describeRevert('0x08c379a0…')   // 'DevnetToken: insufficient balance'
 *   describeRevert('0x4e487b71…11') // 'Panic(0x11): arithmetic overflow or underflow'
 *   describeRevert('0x')            // 'execution reverted without a reason'
 */
import { decodeAbiParameters, type Hex } from 'viem';

const ERROR_STRING = '0x08c379a0';
const PANIC = '0x4e487b71';

const PANIC_CODES: Record<number, string> = {
  0x00: 'generic compiler panic',
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array encoding',
  0x31: 'pop on an empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to an uninitialised internal function',
};

export function describeRevert(data: Hex | null | undefined): string {
  if (!data || data === '0x') return 'execution reverted without a reason';
  const lower = data.toLowerCase() as Hex;
  const selector = lower.slice(0, 10);
  if (selector === ERROR_STRING) {
    try {
      const [message] = decodeAbiParameters([{ type: 'string' }], `0x${lower.slice(10)}`);
      return message;
    } catch {
      return 'execution reverted with a malformed Error(string)';
    }
  }
  if (selector === PANIC) {
    try {
      const [code] = decodeAbiParameters([{ type: 'uint256' }], `0x${lower.slice(10)}`);
      const known = code <= 0xffn ? PANIC_CODES[Number(code)] : undefined;
      return `Panic(0x${code.toString(16).padStart(2, '0')})${known ? `: ${known}` : ''}`;
    } catch {
      return 'execution reverted with a malformed Panic(uint256)';
    }
  }
  if (lower.length >= 10) return `custom error ${selector}`;
  return `execution reverted with data ${lower}`;
}
