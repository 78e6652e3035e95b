/**
 * POST /api/v1/quote (reference orderbook.md §3.1, §7): validates the request, estimates the trade, prices the
 * network fee in the sell token — fee = ceil(gas × gasPrice ÷ sellTokenPrice) — and stores the quote (all but
 * `fast`) so that orders can be matched to it. Also matches orders to quotes (§7.4).
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { AmountError, AppDataError, BUY_ETH_ADDRESS, ZERO_APP_DATA, parseAppDataDocument, parseUint256, hookGas, orderHooksOf, factorInBps, volumeFeeAdjustedQuote } from '../../protocol/index.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { checkNotDenyListed, checkTokenPair, checkTokensServed, checkValidTo } from '../order-rules.js';
import type { DB } from '../../db/schema.js';
import { fromNumeric, toBytes, toNumeric } from '../../db/codec.js';
import type { AppDataService } from '../app-data.js';
import type { NativePriceSource, TradeEstimator } from '../pricing/trade-estimator.js';
import { settlementGas } from '../pricing/uniswap-v2-estimator.js';
import type { OrderQuoter, QuoteForOrderRequest } from '../orders/order-ports.js';
import type { StoredQuote } from './stored-quote.js';
import { RecentQuotes, type RecentQuote } from './recent-quotes.js';

export interface QuoteRequestBody {
  sellToken: string;
  buyToken: string;
  from: string;
  receiver?: string | null;
  kind: 'sell' | 'buy';
  sellAmountBeforeFee?: string;
  sellAmountAfterFee?: string;
  buyAmountAfterFee?: string;
  validTo?: number;
  validFor?: number;
  appData?: string;
  appDataHash?: string;
  sellTokenBalance?: 'erc20' | 'external' | 'internal';
  buyTokenBalance?: 'erc20' | 'internal';
  signingScheme?: 'eip712' | 'ethsign' | 'presign' | 'eip1271';
  onchainOrder?: boolean;
  priceQuality?: 'fast' | 'optimal' | 'verified';
  verificationGasLimit?: number;
  timeout?: number;
}

export interface QuoteChainReads {
  gasPrice(): Promise<bigint>;
  /** null when the address is not an ERC-20 token contract */
  tokenMetadata(token: Address): Promise<{ decimals: number; symbol: string | null } | null>;
}

export interface QuotePolicy {
  bannedAddresses: Set<string>;
  deniedTokens: Set<string>;
  now(): number;
}

export interface QuoteServiceDeps {
  chainId: number;
  db: Kysely<DB>;
  appData: AppDataService;
  estimator: TradeEstimator;
  nativePrices: NativePriceSource;
  chain: QuoteChainReads;
  policy: QuotePolicy;
  /** the chain's wrapped native token: native ETH (0xEeee…) is priced and routed as it */
  wrappedNative?: Address | null;
  /** the volume fee factor in force for a pair at a time (unix seconds), folded into answers (issue 23); absent: 0 */
  volumeFee?: (sellToken: Address, buyToken: Address, nowSeconds: number) => number;
}

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const DEFAULT_VALID_FOR = 1800;
const MIN_VALIDITY = 60;
const MAX_MARKET_VALIDITY = 3 * 3600;
const STANDARD_EXPIRY_S = 60;
const ONCHAIN_EXPIRY_S = 600;
export const EIP1271_VERIFICATION_GAS = 27_000n;
/** expired quotes are deleted at most this often (seconds), by the next quote stored */
const QUOTE_PRUNE_INTERVAL_S = 60;

export class QuoteService implements OrderQuoter {
  private lastPrune = 0;
  /** the quotes stored by this service, until they expire: an order's quote by id without a database read */
  private readonly recent = new RecentQuotes();

  constructor(private readonly deps: QuoteServiceDeps) {}

  /** The token a trade is routed and priced through: native ETH goes as the wrapped native token. */
  private routed(token: Address): Address {
    if (token !== BUY_ETH_ADDRESS) return token;
    if (!this.deps.wrappedNative) throw new OrderBookError('UnsupportedToken', 'this network has no wrapped native token to buy the native token through');
    return this.deps.wrappedNative.toLowerCase() as Address;
  }

  /** The full POST /quote: returns the response body. */
  async quote(body: QuoteRequestBody): Promise<Record<string, unknown>> {
    const { policy } = this.deps;
    const now = policy.now();
    const sellToken = body.sellToken.toLowerCase() as Address;
    const buyToken = body.buyToken.toLowerCase() as Address;
    const from = body.from.toLowerCase() as Address;
    const receiver = body.receiver ? (body.receiver.toLowerCase() as Address) : null;
    const signingScheme = body.signingScheme ?? 'eip712';
    const onchainOrder = body.onchainOrder ?? false;
    const sellTokenBalance = body.sellTokenBalance ?? 'erc20';
    const buyTokenBalance = body.buyTokenBalance ?? 'erc20';

    // exactly one amount, matching the kind
    const amountFields = (['sellAmountBeforeFee', 'sellAmountAfterFee', 'buyAmountAfterFee'] as const).filter((f) => body[f] !== undefined);
    if (amountFields.length !== 1) throw new OrderBookError('InvalidParameter', 'exactly one of sellAmountBeforeFee, sellAmountAfterFee (kind sell) or buyAmountAfterFee (kind buy) is required');
    const amountField = amountFields[0]!;
    if ((body.kind === 'sell') !== amountField.startsWith('sell')) throw new OrderBookError('InvalidParameter', `${amountField} does not go with kind ${body.kind}`);
    const amount = parseAmount(body[amountField]!, amountField);
    if (amount === 0n) throw new OrderBookError('InvalidParameter', `${amountField} must be greater than zero`);
    if (body.validTo !== undefined && body.validFor !== undefined) throw new OrderBookError('InvalidParameter', 'give at most one of validTo and validFor');
    if (onchainOrder && (signingScheme === 'eip712' || signingScheme === 'ethsign')) throw new OrderBookError('InvalidParameter', 'onchainOrder requires signingScheme presign or eip1271');

    // app data
    let appDataHash: Hex;
    let appDataOut: string;
    let gasForHooks = 0n;
    if (body.appData === undefined) {
      if (body.appDataHash !== undefined) throw new OrderBookError('InvalidParameter', 'appDataHash needs the full appData document');
      appDataHash = ZERO_APP_DATA;
      appDataOut = ZERO_APP_DATA;
    } else if (HASH_RE.test(body.appData) && body.appDataHash === undefined) {
      appDataHash = body.appData.toLowerCase() as Hex;
      const known = await this.deps.appData.get(appDataHash);
      if (known === null) throw new OrderBookError('InvalidAppData', `Unknown pre-image for app data hash ${appDataHash}`);
      appDataOut = appDataHash;
      gasForHooks = hookGas(orderHooksOf(known));
    } else {
      let doc;
      try {
        doc = parseAppDataDocument(body.appData);
      } catch (err) {
        if (err instanceof AppDataError) throw new OrderBookError('InvalidAppData', err.message);
        throw err;
      }
      if (body.appDataHash !== undefined && body.appDataHash.toLowerCase() !== doc.hash) {
        throw new OrderBookError('AppDataHashMismatch', `computed appDataHash ${doc.hash} doesn't match expected ${body.appDataHash.toLowerCase()}`);
      }
      appDataHash = doc.hash;
      appDataOut = body.appData;
      gasForHooks = hookGas(doc.protocol.hooks);
    }

    // order-level rules
    checkNotDenyListed(policy.bannedAddresses, [from, receiver]);
    if (sellTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedSellTokenSource', `sellTokenBalance ${sellTokenBalance} is not supported`);
    if (buyTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedBuyTokenDestination', `buyTokenBalance ${buyTokenBalance} is not supported`);
    const validTo = body.validTo ?? now + (body.validFor ?? DEFAULT_VALID_FOR);
    checkValidTo(validTo, now, { min: MIN_VALIDITY, max: signingScheme === 'presign' ? null : MAX_MARKET_VALIDITY, refuseExpired: false });
    checkTokenPair(sellToken, buyToken, this.deps.wrappedNative);
    await this.checkTokens(sellToken, buyToken);

    const extraGas = gasForHooks + (signingScheme === 'eip1271' ? BigInt(body.verificationGasLimit ?? Number(EIP1271_VERIFICATION_GAS)) : 0n);
    const priced = await this.price(
      { sellToken, buyToken, kind: body.kind, amount, amountMode: amountField },
      extraGas,
    );

    const priceQuality = body.priceQuality ?? 'optimal';
    const expiration = new Date((now + (onchainOrder ? ONCHAIN_EXPIRY_S : STANDARD_EXPIRY_S)) * 1000);
    let id: number | null = null;
    if (priceQuality !== 'fast') {
      id = await this.store(priced.stored, { sellToken, buyToken, kind: body.kind, signingScheme, owner: from, expiration, quoteKind: onchainOrder ? `${signingScheme}onchainorder` : 'standard' });
    }

    // the volume fee folded into the answer (reference §8): sell quotes receive less, buy quotes pay more; the
    // stored quote (the orders' reference) stays the unadjusted one
    const volumeFactor = this.deps.volumeFee?.(sellToken, buyToken, now) ?? 0;
    const answered = volumeFeeAdjustedQuote(body.kind, { sellAmount: priced.sellAmount, buyAmount: priced.buyAmount, feeAmount: priced.stored.feeAmount }, volumeFactor);
    const quote: Record<string, unknown> = {
      sellToken,
      buyToken,
      receiver,
      sellAmount: answered.sellAmount.toString(),
      buyAmount: answered.buyAmount.toString(),
      validTo,
      appData: appDataOut,
      feeAmount: priced.stored.feeAmount.toString(),
      gasAmount: priced.stored.gasAmount.toString(),
      gasPrice: priced.stored.gasPrice.toString(),
      sellTokenPrice: String(priced.stored.sellTokenPrice),
      kind: body.kind,
      partiallyFillable: false,
      sellTokenBalance,
      buyTokenBalance,
      signingScheme,
      protocolFeeBps: factorInBps(volumeFactor),
    };
    if (appDataOut !== appDataHash) quote.appDataHash = appDataHash;
    return {
      quote,
      from,
      expiration: priceQuality === 'fast' ? '1970-01-01T00:00:00Z' : expiration.toISOString(),
      id,
      verified: priced.stored.verified,
    };
  }

  private async checkTokens(sellToken: Address, buyToken: Address): Promise<void> {
    checkTokensServed(this.deps.policy.deniedTokens, sellToken, buyToken);
    const [sellMeta, buyMeta] = await Promise.all([
      this.deps.chain.tokenMetadata(sellToken),
      buyToken === BUY_ETH_ADDRESS ? Promise.resolve({ decimals: 18, symbol: 'ETH' }) : this.deps.chain.tokenMetadata(buyToken),
    ]);
    if (!sellMeta) throw new OrderBookError('UnsupportedToken', `sellToken ${sellToken} is not an ERC-20 token contract on this chain`);
    if (!buyMeta) throw new OrderBookError('UnsupportedToken', `buyToken ${buyToken} is not an ERC-20 token contract on this chain`);
  }

  /** estimate + fee, for the three amount modes of reference §7.1 */
  private async price(
    req: { sellToken: Address; buyToken: Address; kind: 'sell' | 'buy'; amount: bigint; amountMode: 'sellAmountBeforeFee' | 'sellAmountAfterFee' | 'buyAmountAfterFee' },
    extraGas: bigint,
  ): Promise<{ sellAmount: bigint; buyAmount: bigint; stored: StoredQuote }> {
    const [estimateOrError, gasPrice, sellTokenPrice, buyTokenPrice] = await Promise.all([
      this.deps.estimator.estimate({ sellToken: req.sellToken, buyToken: this.routed(req.buyToken), kind: req.kind, amount: req.amount }).catch((err: unknown) => {
        if (err instanceof OrderBookError && err.errorType === 'NoLiquidity') return err;
        throw err;
      }),
      this.deps.chain.gasPrice(),
      this.deps.nativePrices.nativePrice(req.sellToken),
      req.buyToken === BUY_ETH_ADDRESS ? Promise.resolve(1) : this.deps.nativePrices.nativePrice(req.buyToken),
    ]);
    if (sellTokenPrice === null || sellTokenPrice <= 0) throw new OrderBookError('NoLiquidity', `no native price for sellToken ${req.sellToken}`);
    if (buyTokenPrice === null || buyTokenPrice <= 0) throw new OrderBookError('NoLiquidity', `no native price for buyToken ${req.buyToken}`);
    // a sell amount too small to pay even a direct trade's fee is told so, whether or not a route exists for it
    if (estimateOrError instanceof OrderBookError) {
      const minimumFee = feeInSellToken(settlementGas(1) + extraGas, gasPrice, sellTokenPrice);
      if (req.amountMode === 'sellAmountBeforeFee' && req.amount <= minimumFee) {
        throw new OrderBookError('SellAmountDoesNotCoverFee', `the sell amount ${req.amount} does not cover the fee ${minimumFee}`, { data: { fee_amount: minimumFee.toString() } });
      }
      throw estimateOrError;
    }
    const estimate = estimateOrError;
    const gasAmount = estimate.gas + extraGas;
    const feeAmount = feeInSellToken(gasAmount, gasPrice, sellTokenPrice);
    const base = { feeAmount, gasAmount, gasPrice, sellTokenPrice, solver: estimate.solver, verified: estimate.verified, id: null };
    switch (req.amountMode) {
      case 'sellAmountBeforeFee': {
        const x = req.amount;
        if (x <= feeAmount) throw new OrderBookError('SellAmountDoesNotCoverFee', `the sell amount ${x} does not cover the fee ${feeAmount}`, { data: { fee_amount: feeAmount.toString() } });
        const sellAmount = x - feeAmount;
        const buyAmount = (estimate.outAmount * sellAmount) / x;
        return { sellAmount, buyAmount, stored: { ...base, sellAmount: x, buyAmount: estimate.outAmount } };
      }
      case 'sellAmountAfterFee':
        return { sellAmount: req.amount, buyAmount: estimate.outAmount, stored: { ...base, sellAmount: req.amount + feeAmount, buyAmount: estimate.outAmount } };
      case 'buyAmountAfterFee':
        return { sellAmount: estimate.outAmount, buyAmount: req.amount, stored: { ...base, sellAmount: estimate.outAmount, buyAmount: req.amount } };
    }
  }

  private async store(
    q: StoredQuote,
    meta: { sellToken: Address; buyToken: Address; kind: 'sell' | 'buy'; signingScheme: string; owner: Address; expiration: Date; quoteKind: string },
  ): Promise<number> {
    await this.pruneExpired();
    const row = await this.deps.db
      .insertInto('quotes')
      .values({
        chain_id: this.deps.chainId,
        sell_token: toBytes(meta.sellToken),
        buy_token: toBytes(meta.buyToken),
        sell_amount: toNumeric(q.sellAmount),
        buy_amount: toNumeric(q.buyAmount),
        fee_amount: toNumeric(q.feeAmount),
        gas_amount: toNumeric(q.gasAmount),
        gas_price: toNumeric(q.gasPrice),
        sell_token_price: q.sellTokenPrice,
        kind: meta.kind,
        quote_kind: meta.quoteKind,
        signing_scheme: meta.signingScheme,
        owner: toBytes(meta.owner),
        solver: q.solver,
        verified: q.verified,
        expiration: meta.expiration,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    this.recent.remember({ sellToken: meta.sellToken.toLowerCase() as Address, buyToken: meta.buyToken.toLowerCase() as Address, kind: meta.kind, expiresAt: meta.expiration.getTime(), quote: { ...q, id } });
    return id;
  }

  /** Deletes this chain's expired quotes (no order can use them any more), at most once a minute. */
  private async pruneExpired(): Promise<void> {
    const now = this.deps.policy.now();
    if (now - this.lastPrune < QUOTE_PRUNE_INTERVAL_S) return;
    this.lastPrune = now;
    this.recent.forgetExpired(now * 1000);
    await this.deps.db.deleteFrom('quotes').where('chain_id', '=', this.deps.chainId).where('expiration', '<', new Date(now * 1000)).execute();
  }

  /** reference §7.4: the quote by id when it matches the order, else a stored matching one, else a fresh one */
  async quoteForOrder(r: QuoteForOrderRequest): Promise<StoredQuote> {
    const nowMs = this.deps.policy.now() * 1000;
    // a quote stored here is held in memory: its row says the same, so a held quote that does not match the order
    // would not match in the database either
    const held = r.quoteId === null ? undefined : this.recent.get(r.quoteId);
    if (held && heldQuoteMatches(held, r, nowMs)) return { ...held.quote };
    const db = this.deps.db;
    const base = db
      .selectFrom('quotes')
      .selectAll()
      .where('chain_id', '=', this.deps.chainId)
      .where('sell_token', '=', toBytes(r.sellToken))
      .where('buy_token', '=', toBytes(r.buyToken))
      .where('kind', '=', r.kind)
      .where('expiration', '>=', new Date(nowMs));
    const amountMatch = r.kind === 'buy'
      ? base.where('buy_amount', '=', toNumeric(r.buyAmount))
      : base.where((eb) => eb.or([eb('sell_amount', '=', toNumeric(r.sellAmount)), eb('sell_amount', '=', toNumeric(r.sellAmount + r.feeAmount))]));
    if (r.quoteId !== null && !held) {
      const byId = await amountMatch.where('id', '=', r.quoteId).executeTakeFirst();
      if (byId) return fromRow(byId);
    }
    const best = await amountMatch
      .orderBy('verified', 'desc')
      .orderBy(sql`buy_amount::float8 / (sell_amount::float8 + gas_amount::float8 * gas_price::float8 / nullif(sell_token_price, 0))`, 'desc')
      .limit(1)
      .executeTakeFirst();
    if (best) return fromRow(best);
    // fresh: the order's sell amount already includes the fee (AfterFee variant)
    await this.checkTokens(r.sellToken, r.buyToken);
    const extraGas = r.signingScheme === 'eip1271' ? EIP1271_VERIFICATION_GAS : 0n;
    const priced = await this.price(
      r.kind === 'sell'
        ? { sellToken: r.sellToken, buyToken: r.buyToken, kind: 'sell', amount: r.sellAmount + r.feeAmount, amountMode: 'sellAmountBeforeFee' }
        : { sellToken: r.sellToken, buyToken: r.buyToken, kind: 'buy', amount: r.buyAmount, amountMode: 'buyAmountAfterFee' },
      extraGas,
    ).catch((err) => {
      // an order too small to pay its own fee is still a valid (out-of-market) limit order
      if (err instanceof OrderBookError && err.errorType === 'SellAmountDoesNotCoverFee') throw new OrderBookError('NoLiquidity', err.description);
      throw err;
    });
    const id = await this.store(priced.stored, {
      sellToken: r.sellToken, buyToken: r.buyToken, kind: r.kind, signingScheme: r.signingScheme, owner: r.from,
      expiration: new Date((this.deps.policy.now() + STANDARD_EXPIRY_S) * 1000), quoteKind: 'standard',
    });
    return { ...priced.stored, id };
  }
}

/** The by-id query's conditions (chain aside: a service holds its own chain's quotes) on a quote held in memory. */
function heldQuoteMatches(held: RecentQuote, r: QuoteForOrderRequest, nowMs: number): boolean {
  if (held.sellToken !== r.sellToken.toLowerCase() || held.buyToken !== r.buyToken.toLowerCase() || held.kind !== r.kind || held.expiresAt < nowMs) return false;
  return r.kind === 'buy' ? held.quote.buyAmount === r.buyAmount : held.quote.sellAmount === r.sellAmount || held.quote.sellAmount === r.sellAmount + r.feeAmount;
}

/** fee = ceil(gas × gasPrice ÷ sellTokenPrice), sellTokenPrice in native atoms per sell-token atom */
export function feeInSellToken(gas: bigint, gasPrice: bigint, sellTokenPrice: number): bigint {
  const nativeCost = gas * gasPrice;
  // sellTokenPrice as a rational with 18 fractional digits of precision, to stay in bigint
  const SCALE = 10n ** 18n;
  const scaledPrice = BigInt(Math.max(1, Math.round(sellTokenPrice * 1e18)));
  return (nativeCost * SCALE + scaledPrice - 1n) / scaledPrice;
}

function parseAmount(value: string, field: string): bigint {
  try {
    return parseUint256(value, field);
  } catch (err) {
    if (err instanceof AmountError) throw new OrderBookError('InvalidParameter', err.kind === 'overflow' ? `${field} exceeds uint256` : `${field} must be a decimal string of digits`);
    throw err;
  }
}

function fromRow(row: { id: number; sell_amount: string; buy_amount: string; fee_amount: string; gas_amount: string; gas_price: string; sell_token_price: number; solver: string; verified: boolean }): StoredQuote {
  return {
    id: Number(row.id),
    sellAmount: fromNumeric(row.sell_amount),
    buyAmount: fromNumeric(row.buy_amount),
    feeAmount: fromNumeric(row.fee_amount),
    gasAmount: fromNumeric(row.gas_amount),
    gasPrice: fromNumeric(row.gas_price),
    sellTokenPrice: Number(row.sell_token_price),
    solver: row.solver,
    verified: Boolean(row.verified),
  };
}
