/**
 * GPv2Trade `flags` word: bit0 kind, bit1 partiallyFillable, bits2–3 sellTokenBalance,
 * bit4 buyTokenBalance, bits5–6 signing scheme; higher bits must be zero.
 */
import type { BuyTokenBalance, OrderKind, SellTokenBalance } from './order.js';
import { ProtocolError } from './protocol-error.js';
import { SIGNING_SCHEMES, type SigningScheme } from './signing-scheme.js';

export interface TradeFlags {
  readonly kind: OrderKind;
  readonly partiallyFillable: boolean;
  readonly sellTokenBalance: SellTokenBalance;
  readonly buyTokenBalance: BuyTokenBalance;
  readonly signingScheme: SigningScheme;
}

/** Flags with bits the settlement contract does not accept. */
export class TradeFlagsError extends ProtocolError<'invalidFlags'> {}

const SELL_TOKEN_BALANCE_BITS: Record<SellTokenBalance, bigint> = { erc20: 0b00n, external: 0b10n, internal: 0b11n };
const MAX_FLAGS = 0b111_1111n;

/**
 * Packs order flags into the settlement's `flags` word.
 *
 * @example
 * encodeTradeFlags({ kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20', signingScheme: 'eip712' }) // 0n
 * encodeTradeFlags({ kind: 'buy', partiallyFillable: true, sellTokenBalance: 'internal', buyTokenBalance: 'internal', signingScheme: 'presign' }) // 0x7fn
 */
export function encodeTradeFlags(flags: TradeFlags): bigint {
  const scheme = SIGNING_SCHEMES.indexOf(flags.signingScheme);
  if (scheme < 0) throw new TradeFlagsError('invalidFlags', `unknown signing scheme ${String(flags.signingScheme)}`);
  return (
    (flags.kind === 'buy' ? 1n : 0n) |
    (flags.partiallyFillable ? 1n << 1n : 0n) |
    (SELL_TOKEN_BALANCE_BITS[flags.sellTokenBalance] << 2n) |
    (flags.buyTokenBalance === 'internal' ? 1n << 4n : 0n) |
    (BigInt(scheme) << 5n)
  );
}

/**
 * Unpacks a `flags` word the way GPv2Trade does (bits 3,2 = 0,x both mean erc20). Throws
 * `TradeFlagsError` when bits above bit 6 are set or the value is negative.
 *
 * @example
 * decodeTradeFlags(0x60n).signingScheme // 'presign'
 */
export function decodeTradeFlags(flags: bigint): TradeFlags {
  if (flags < 0n || flags > MAX_FLAGS) throw new TradeFlagsError('invalidFlags', `trade flags ${flags} are outside [0, 127] (bits above bit 6 must be zero)`);
  const sellBits = (flags >> 2n) & 0b11n;
  return {
    kind: flags & 1n ? 'buy' : 'sell',
    partiallyFillable: ((flags >> 1n) & 1n) === 1n,
    sellTokenBalance: (sellBits & 0b10n) === 0n ? 'erc20' : sellBits === 0b10n ? 'external' : 'internal',
    buyTokenBalance: ((flags >> 4n) & 1n) === 1n ? 'internal' : 'erc20',
    signingScheme: SIGNING_SCHEMES[Number((flags >> 5n) & 0b11n)],
  };
}
