/**
 * Protocol fee policies (reference fees.md §2, §6): what the protocol (and partners) take on top of the network
 * fee, as production writes them in auctions and sends them to solver engines. Factors are JS numbers (f64, as
 * upstream), amounts bigint. A configured schedule is a list of `CLASS:KIND:FACTOR[:MAX_VOLUME_FACTOR]` entries.
 *
 * @example
 *   parseFeeSchedule('limit:surplus:0.5:0.0098,any:volume:0.0002')
 *   // [{ orderClass: 'limit', policy: { kind: 'surplus', factor: 0.5, maxVolumeFactor: 0.0098 } }, { orderClass: 'any', ... }]
 */

/** The reference quote a price-improvement policy measures against (sell/buy amounts and the network fee estimate). */
export interface FeeQuote {
  sellAmount: bigint;
  buyAmount: bigint;
  fee: bigint;
}

/** A partner's policy names its recipient (lowercase; never on the wire — partners are paid off-chain). */
export type FeePolicy = (
  | { kind: 'surplus'; factor: number; maxVolumeFactor: number }
  | { kind: 'priceImprovement'; factor: number; maxVolumeFactor: number; quote: FeeQuote }
  | { kind: 'volume'; factor: number }
) & { recipient?: string };

/** A configured policy before it meets an order: a price-improvement one gets its quote per order. */
export type ConfiguredPolicy = { kind: 'surplus' | 'priceImprovement'; factor: number; maxVolumeFactor: number } | { kind: 'volume'; factor: number };

export interface ScheduledPolicy {
  /** `limit`: orders outside the market; `market`: inside; `any`: all */
  orderClass: 'limit' | 'market' | 'any';
  policy: ConfiguredPolicy;
}

/** Production's documented schedule (docs.cow.fi governance/fees): the default of `FEE_POLICIES`. */
export const DEFAULT_FEE_POLICIES = 'limit:surplus:0.5:0.0098,market:price-improvement:0.5:0.0098,any:volume:0.0002';

export class FeeScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeeScheduleError';
  }
}

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** A factor in [0, 1) written as a plain decimal ("0.0098"); FeeScheduleError otherwise. */
export function parseFeeFactor(text: string, what = 'factor'): number {
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value) || value < 0 || value >= 1) throw new FeeScheduleError(`${what} "${text}" must be a decimal in [0, 1)`);
  return value;
}

/** `none` or a comma-separated list of `CLASS:KIND:FACTOR[:MAX_VOLUME_FACTOR]`, in order of application. */
export function parseFeeSchedule(text: string): ScheduledPolicy[] {
  const trimmed = text.trim();
  if (trimmed === 'none' || trimmed === '') return [];
  return trimmed.split(',').map((entry) => {
    const parts = entry.trim().split(':');
    const [orderClass, kind, factor, max] = parts;
    if (orderClass !== 'limit' && orderClass !== 'market' && orderClass !== 'any') throw new FeeScheduleError(`"${entry}": class must be limit, market or any`);
    if (kind === 'volume') {
      if (parts.length !== 3) throw new FeeScheduleError(`"${entry}": a volume policy takes one factor (any:volume:0.0002)`);
      return { orderClass, policy: { kind: 'volume', factor: parseFeeFactor(factor!, `"${entry}": factor`) } };
    }
    if (kind === 'surplus' || kind === 'price-improvement') {
      if (parts.length !== 4) throw new FeeScheduleError(`"${entry}": a ${kind} policy takes a factor and a max volume factor (limit:${kind}:0.5:0.0098)`);
      return {
        orderClass,
        policy: { kind: kind === 'surplus' ? 'surplus' : 'priceImprovement', factor: parseFeeFactor(factor!, `"${entry}": factor`), maxVolumeFactor: parseFeeFactor(max!, `"${entry}": max volume factor`) },
      };
    }
    throw new FeeScheduleError(`"${entry}": kind must be surplus, price-improvement or volume`);
  });
}

/** The wire shape (externally tagged, camelCase; factors as numbers, amounts as decimal strings). */
export type FeePolicyJson =
  | { surplus: { factor: number; maxVolumeFactor: number } }
  | { priceImprovement: { factor: number; maxVolumeFactor: number; quote: { sellAmount: string; buyAmount: string; fee: string } } }
  | { volume: { factor: number } };

export function feePolicyJson(p: FeePolicy): FeePolicyJson {
  switch (p.kind) {
    case 'surplus':
      return { surplus: { factor: p.factor, maxVolumeFactor: p.maxVolumeFactor } };
    case 'priceImprovement':
      return { priceImprovement: { factor: p.factor, maxVolumeFactor: p.maxVolumeFactor, quote: { sellAmount: p.quote.sellAmount.toString(), buyAmount: p.quote.buyAmount.toString(), fee: p.quote.fee.toString() } } };
    default:
      return { volume: { factor: p.factor } };
  }
}

/** The wire shape read back (trusted input: what `feePolicyJson` wrote, e.g. from the database). */
export function feePolicyFromJson(j: FeePolicyJson): FeePolicy {
  if ('surplus' in j) return { kind: 'surplus', factor: j.surplus.factor, maxVolumeFactor: j.surplus.maxVolumeFactor };
  if ('priceImprovement' in j) {
    const { factor, maxVolumeFactor, quote } = j.priceImprovement;
    return { kind: 'priceImprovement', factor, maxVolumeFactor, quote: { sellAmount: BigInt(quote.sellAmount), buyAmount: BigInt(quote.buyAmount), fee: BigInt(quote.fee) } };
  }
  return { kind: 'volume', factor: j.volume.factor };
}
