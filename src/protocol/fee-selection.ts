/**
 * Which fee policies an order gets in an auction (reference fees.md §3–4): the configured schedule's `any`
 * entries always, `limit` ones when the order is outside the market and `market` ones when inside — judged
 * against its reference quote — in configured order; volume policies skip same-token trades; then its partner
 * fees from app data, each share cut so that all of them together compound to at most the cap.
 *
 * @example
 *   orderFeePolicies({ order, quote, schedule: parseFeeSchedule(DEFAULT_FEE_POLICIES), partnerFees: [], maxPartnerFee: 0.01 })
 */
import type { PartnerFee } from './app-data-document.js';
import type { FeePolicy, FeeQuote, ScheduledPolicy } from './fee-policy.js';

export interface FeeOrder {
  kind: 'sell' | 'buy';
  sellToken: string;
  buyToken: string;
  sellAmount: bigint;
  buyAmount: bigint;
  /** the signed fee (0 since CIP-38) */
  feeAmount: bigint;
}

/**
 * Outside the market against its reference quote (§3.2); no quote (or a degenerate one) is outside.
 * Sell: order.sell × (q.buy − q.fee × q.buy / q.sell) < q.sell × order.buy. Buy: order.sell × q.buy < (q.sell + q.fee) × order.buy.
 */
export function isOutsideMarket(order: FeeOrder, quote: FeeQuote | null): boolean {
  if (!quote || quote.sellAmount <= 0n || quote.buyAmount <= 0n) return true;
  if (order.kind === 'sell') {
    const net = quote.buyAmount - (quote.fee * quote.buyAmount) / quote.sellAmount;
    if (net < 0n) return true;
    return order.sellAmount * net < quote.sellAmount * order.buyAmount;
  }
  return order.sellAmount * quote.buyAmount < (quote.sellAmount + quote.fee) * order.buyAmount;
}

const SCALE = 10n ** 28n;

/** A decimal JS number as a 28-digit fixed-point bigint (its shortest decimal text, as written in config). */
function fixed(value: number): bigint {
  const [mantissa, exponent = '0'] = String(value).split('e');
  const [int, frac = ''] = mantissa!.split('.');
  const digits = BigInt(`${int}${frac}`);
  const shift = 28 + Number(exponent) - frac.length;
  return shift >= 0 ? digits * 10n ** BigInt(shift) : digits / 10n ** BigInt(-shift);
}

function toNumber(v: bigint): number {
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const text = `${abs / SCALE}.${(abs % SCALE).toString().padStart(28, '0')}`;
  return negative ? -Number(text) : Number(text);
}

/**
 * The volume shares partner entries are granted under the cap (§4), in list order: with `acc` the share granted
 * so far, an entry gets min(v, (1 + cap)/(1 + acc) − 1), and acc grows by min(v, cap − acc); 28-digit decimals.
 * Upstream's vectors (cap 0.3): [0.1, 0.25] → [0.1, 0.18181818181818182].
 */
export function cappedPartnerShares(shares: readonly number[], cap: number): number[] {
  const capFixed = fixed(cap);
  let acc = 0n;
  return shares.map((share) => {
    const v = fixed(share);
    const remaining = ((SCALE + capFixed) * SCALE) / (SCALE + acc) - SCALE;
    const granted = v < 0n ? 0n : v > remaining ? (remaining < 0n ? 0n : remaining) : v;
    const left = capFixed - acc;
    acc += v < left ? v : left;
    return toNumber(granted);
  });
}

/** Partner fees from app data as policies (§4): bps → factors, each entry's volume share capped. */
export function partnerFeePolicies(partnerFees: readonly PartnerFee[], quote: FeeQuote, maxPartnerFee: number): FeePolicy[] {
  const shares = cappedPartnerShares(
    partnerFees.map((p) => (p.kind === 'volume' ? p.bps : p.maxVolumeBps) / 10_000),
    maxPartnerFee,
  );
  const out: FeePolicy[] = [];
  partnerFees.forEach((p, i) => {
    const share = shares[i]!;
    const recipient = p.recipient.toLowerCase();
    if (p.kind === 'volume') out.push({ kind: 'volume', factor: share, recipient });
    else {
      const factor = Math.min(p.bps, 9_999) / 10_000;
      if (p.kind === 'surplus') out.push({ kind: 'surplus', factor, maxVolumeFactor: share, recipient });
      else out.push({ kind: 'priceImprovement', factor, maxVolumeFactor: share, quote, recipient });
    }
  });
  return out;
}

export interface OrderFeePolicyInput {
  order: FeeOrder;
  /** the order's reference quote, null when it has none */
  quote: FeeQuote | null;
  schedule: readonly ScheduledPolicy[];
  partnerFees: readonly PartnerFee[];
  maxPartnerFee: number;
}

/** Every policy of an order in one auction, in order of application: the schedule's, then the partners'. */
export function orderFeePolicies(input: OrderFeePolicyInput): FeePolicy[] {
  const { order, quote, schedule } = input;
  const outside = isOutsideMarket(order, quote);
  const sameToken = order.sellToken.toLowerCase() === order.buyToken.toLowerCase();
  const out: FeePolicy[] = [];
  for (const { orderClass, policy } of schedule) {
    if (orderClass === 'limit' && !outside) continue;
    if (orderClass === 'market' && outside) continue;
    if (policy.kind === 'volume') {
      if (!sameToken) out.push({ kind: 'volume', factor: policy.factor });
    } else if (policy.kind === 'priceImprovement') {
      // without a quote there is nothing to improve on: a quote-less order is outside, and gets no market policy
      if (quote) out.push({ ...policy, kind: 'priceImprovement', quote: { sellAmount: quote.sellAmount, buyAmount: quote.buyAmount, fee: quote.fee } });
    } else out.push({ ...policy, kind: 'surplus' });
  }
  // without a quote, upstream's stand-in: the order's sell amount, buy amount 0, its signed fee
  const reference = quote ?? { sellAmount: order.sellAmount, buyAmount: 0n, fee: order.feeAmount };
  // partner entries keep their app-data positions (recipients are mapped back by position)
  return [...out, ...partnerFeePolicies(input.partnerFees, reference, input.maxPartnerFee)];
}

/**
 * The volume fee a quote folds in (reference §8; issue 23 point 8): the schedule's volume factors that apply to
 * an order at the quoted price (classes `any` and `market`), compounded; 0 for a same-token trade.
 */
export function quoteVolumeFactor(schedule: readonly ScheduledPolicy[], sellToken: string, buyToken: string): number {
  if (sellToken.toLowerCase() === buyToken.toLowerCase()) return 0;
  let kept = 1;
  for (const { orderClass, policy } of schedule) if (orderClass !== 'limit' && policy.kind === 'volume') kept *= 1 - policy.factor;
  return Number((1 - kept).toPrecision(12));
}
