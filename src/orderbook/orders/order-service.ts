/**
 * Order intake: POST /api/v1/orders runs the validation pipeline of reference orderbook.md §5 in that order,
 * with the spec's error names (§4.3: the spec decides), then stores the order. Reads and status live here too.
 */
import type { Address, Hex } from 'viem';
import {
  AmountError,
  AppDataError,
  SignatureError,
  ZERO_ADDRESS,
  computeOrderUid,
  hookGas,
  MAX_ORDER_GAS,
  NO_ORDER_HOOKS,
  domainSeparator,
  MAX_UINT256,
  orderDigest,
  parseAppDataDocument,
  parseUint256,
  recoverOrderSigner,
  type RecoverAddress,
  type AppDataDocument,
  type Order,
} from '../../protocol/index.js';
import { OrderBookError, isOrderBookError } from '../../protocol/order-book-error.js';
import { checkNotDenyListed, checkTokenPair, checkTokensServed, checkValidTo } from '../order-rules.js';
import type { AppDataService } from '../app-data.js';
import type { StoredQuote } from '../quotes/stored-quote.js';
import { EIP1271_VERIFICATION_GAS } from '../quotes/quote-service.js';
import type { NewOrder, OrderRepository, StoredOrder } from './order-repository.js';
import type { OrderChainReads, OrderPolicy, OrderQuoter } from './order-ports.js';
import { isFullyExecuted, isInvalidated, orderStatus } from './order-status.js';
import { toOrderRecord } from './order-record.js';
import type { TradeFeeReader } from '../trades/trade-fees.js';

/** The POST /orders body after schema validation (strings as received). */
export interface OrderCreationBody {
  sellToken: string;
  buyToken: string;
  receiver?: string | null;
  sellAmount: string;
  buyAmount: string;
  validTo: number;
  feeAmount: string;
  kind: 'sell' | 'buy';
  partiallyFillable?: boolean;
  sellTokenBalance?: 'erc20' | 'external' | 'internal';
  buyTokenBalance?: 'erc20' | 'internal';
  signingScheme: 'eip712' | 'ethsign' | 'presign' | 'eip1271';
  signature: string;
  from?: string | null;
  quoteId?: number | null;
  appData: string;
  appDataHash?: string | null;
}

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

export interface OrderServiceDeps {
  chainId: number;
  settlement: Address;
  /** the chain's wrapped native token: selling it for native ETH is SameBuyAndSellToken */
  wrappedNative: Address | null;
  orders: OrderRepository;
  appData: AppDataService;
  chain: OrderChainReads;
  quoter: OrderQuoter;
  policy: OrderPolicy;
  /** the curve arithmetic of signer recovery (a worker pool in the node; default: this thread) */
  recoverAddress?: RecoverAddress;
  /** reads executed fees back (issue 23); absent: executedFee is the signed fee only */
  tradeFees?: Pick<TradeFeeReader, 'executedFees'>;
}

/** The signed fields of a POST /orders body, parsed (step 0): lowercase addresses, bigint amounts. */
interface OrderFields {
  sellToken: Address;
  buyToken: Address;
  /** null: the owner receives (also for the zero address) */
  receiver: Address | null;
  from: Address | null;
  sellAmount: bigint;
  buyAmount: bigint;
  feeAmount: bigint;
  validTo: number;
  kind: 'sell' | 'buy';
  partiallyFillable: boolean;
  sellTokenBalance: 'erc20' | 'external' | 'internal';
  buyTokenBalance: 'erc20' | 'internal';
}

/** A balance and allowance read started early, for the owner the order names. */
interface EarlyFunds {
  owner: Address;
  read: Promise<{ balance: bigint; allowance: bigint }>;
}

interface ResolvedAppData {
  hash: Hex;
  document: AppDataDocument | null;
  newDocument: string | null;
}

export class OrderService {
  /** the EIP-712 domain separator of this chain's settlement, computed once */
  private readonly domainSeparator: Hex;

  constructor(private readonly deps: OrderServiceDeps) {
    this.domainSeparator = domainSeparator(deps.chainId, deps.settlement);
  }

  /**
   * Validates and stores a signed order; returns its UID. Throws OrderBookError with the spec's errorType.
   * The steps are those of reference orderbook.md §5, in its order (step 11 before 10: the gas limit needs no
   * database read); each is one method below.
   */
  async create(body: OrderCreationBody): Promise<Hex> {
    const now = this.deps.policy.now();
    const fields = readOrderFields(body); //                                          0. amounts and addresses
    const appData = await this.resolveAppData(body); //                               1., 3. app data
    const replaced = await this.loadReplaced(appData.document); //                    2. replaced order
    const funds = this.readFundsEarly(body.signingScheme, fields, appData.document); // (8. read during 4.)
    const { digest, owner, signature } = await this.recoverOwner(body, fields, appData); // 4. signature → owner
    const uid = this.newUid(digest, owner, fields.validTo); //                       5. UID
    checkNonZeroAmounts(fields); //                                                   6. non-zero amounts
    this.checkOrderRules(fields, owner, now); //                                      7. rules shared with quotes
    await this.checkFunds(body.signingScheme, fields, owner, appData.document, funds); // 8. balance and allowance
    const quote = await this.findQuote(body, fields, owner, appData.hash); //         9. quote
    checkGas(quote, appData.document, body.signingScheme); //                         11. gas limit
    const outsideMarket = await this.checkLimitOrderCap(body.signingScheme, fields, owner, quote, now); // 10.
    const validFrom = this.checkValidFrom(fields, appData.document); //               12. validFrom
    const order: NewOrder = { //                                                      13. the order to store
      ...fields, chainId: this.deps.chainId, uid, owner, appData: appData.hash, signature, signingScheme: body.signingScheme,
      class: 'limit', settlementContract: this.deps.settlement, outsideMarket, validFrom,
    };
    await this.persist(order, quote, appData.newDocument, replaced); //               14. persist
    return uid;
  }

  /** 2. The order named by `metadata.replacedOrder.uid`, under the cancellation rules; null when none. */
  private async loadReplaced(document: AppDataDocument | null): Promise<StoredOrder | null> {
    const replacedUid = document?.protocol.replacedOrderUid ?? null;
    return replacedUid ? this.loadCancellable(replacedUid) : null;
  }

  /** 4. The owner: from the signature, checked against `from` and app-data `metadata.signer`. */
  private async recoverOwner(body: OrderCreationBody, fields: OrderFields, appData: ResolvedAppData): Promise<{ digest: Hex; owner: Address; signature: Hex }> {
    const order: Order = {
      sellToken: fields.sellToken, buyToken: fields.buyToken, receiver: fields.receiver, sellAmount: fields.sellAmount, buyAmount: fields.buyAmount,
      validTo: fields.validTo, appData: appData.hash, feeAmount: fields.feeAmount, kind: fields.kind, partiallyFillable: fields.partiallyFillable,
      sellTokenBalance: fields.sellTokenBalance, buyTokenBalance: fields.buyTokenBalance,
    };
    const digest = orderDigest(order, this.domainSeparator);
    const signer = appData.document?.protocol.signer ?? null;
    if (fields.from && signer && fields.from !== signer) throw new OrderBookError('AppdataFromMismatch', `from ${fields.from} does not match app-data metadata.signer ${signer}`);
    const { owner, signature } = await this.verifySignature(body, digest, fields.from ?? signer);
    return { digest, owner, signature };
  }

  /**
   * 5. The UID. Whether it is a duplicate is the insert's to say (step 14, as upstream): a database read here would
   * cost every order a round trip to tell early what only a resubmission has.
   */
  private newUid(digest: Hex, owner: Address, validTo: number): Hex {
    return computeOrderUid(digest, owner, validTo);
  }

  /**
   * 7. Order-level rules, the same as for quotes (order-rules.ts). Since CIP-38 every API order is a zero-fee limit
   * order (NonZeroFee in step 9); whether it is inside the market comes from its quote and limit price (step 10).
   */
  private checkOrderRules(fields: OrderFields, owner: Address, now: number): void {
    const { policy } = this.deps;
    checkNotDenyListed(policy.bannedAddresses, [owner, fields.receiver]);
    if (fields.buyTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedBuyTokenDestination', `buyTokenBalance ${fields.buyTokenBalance} is not supported`);
    if (fields.sellTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedSellTokenSource', `sellTokenBalance ${fields.sellTokenBalance} is not supported`);
    // presign orders too: unbounded validity would let anyone park orders in another owner's name for ever
    checkValidTo(fields.validTo, now, { min: policy.minValidity, max: policy.maxLimitValidity, refuseExpired: true, maxAppliesTo: 'a limit order' });
    checkTokenPair(fields.sellToken, fields.buyToken, this.deps.wrappedNative);
    checkTokensServed(policy.deniedTokens, fields.sellToken, fields.buyToken);
  }

  /**
   * The chain read of step 8, started before step 4 when the order names its owner (`from`, else the app data's
   * `metadata.signer`): the read runs while the signature is recovered, and step 8 uses it only if step 4 confirms
   * that owner (else it reads again). Its failure surfaces at step 8, as the read's own would.
   */
  private readFundsEarly(scheme: OrderCreationBody['signingScheme'], fields: OrderFields, document: AppDataDocument | null): EarlyFunds | null {
    const named = fields.from ?? document?.protocol.signer ?? null;
    if (scheme === 'presign' || named === null) return null;
    const read = this.deps.chain.balanceAndAllowance(named, fields.sellToken, document?.protocol.hooks.pre ?? []);
    read.catch(() => {}); // awaited at step 8, unless an earlier step refuses the order
    return { owner: named, read };
  }

  /**
   * 8. Funds: balance and allowance to the vault relayer ≥ sellAmount + feeAmount (spec), in one chain read; presign
   * owners usually approve in the same transaction as setPreSignature, so they are checked at auction time.
   */
  private async checkFunds(scheme: OrderCreationBody['signingScheme'], fields: OrderFields, owner: Address, document: AppDataDocument | null, early: EarlyFunds | null): Promise<void> {
    if (scheme === 'presign') return;
    const needed = fields.sellAmount + fields.feeAmount;
    const { balance, allowance } = early && early.owner === owner ? await early.read : await this.deps.chain.balanceAndAllowance(owner, fields.sellToken, document?.protocol.hooks.pre ?? []);
    if (balance < needed) throw new OrderBookError('InsufficientBalance', `owner balance ${balance} of ${fields.sellToken} is below sellAmount + feeAmount = ${needed}`);
    if (allowance < needed) throw new OrderBookError('InsufficientAllowance', `allowance ${allowance} to the vault relayer is below sellAmount + feeAmount = ${needed}; approve the vault relayer, not the settlement`);
  }

  /** 9. The quote: by id, else stored, else fresh (limit orders tolerate NoLiquidity: null). A signed fee is refused (CIP-38). */
  private async findQuote(body: OrderCreationBody, fields: OrderFields, owner: Address, appDataHash: Hex): Promise<StoredQuote | null> {
    if (fields.feeAmount !== 0n) throw new OrderBookError('NonZeroFee', 'feeAmount must be 0: since CIP-38 the network fee is taken from the surplus; fold the quoted fee into sellAmount');
    try {
      return await this.deps.quoter.quoteForOrder({
        quoteId: body.quoteId ?? null, sellToken: fields.sellToken, buyToken: fields.buyToken, kind: fields.kind, sellAmount: fields.sellAmount,
        buyAmount: fields.buyAmount, feeAmount: fields.feeAmount, from: owner, signingScheme: body.signingScheme, appData: appDataHash, validTo: fields.validTo,
      });
    } catch (err) {
      if (isOrderBookError(err, 'NoLiquidity')) return null;
      throw err;
    }
  }

  /**
   * 10. Limit orders outside the market count towards a per-owner cap; presign orders only once signed on chain
   * (anyone may post one in any owner's name), so a new one never hits the cap. Returns whether it is outside.
   */
  private async checkLimitOrderCap(scheme: OrderCreationBody['signingScheme'], fields: OrderFields, owner: Address, quote: StoredQuote | null, now: number): Promise<boolean> {
    const outsideMarket = quote === null || isOutsideMarket(fields.kind, fields.sellAmount, fields.buyAmount, quote);
    if (outsideMarket && scheme !== 'presign') {
      const { policy } = this.deps;
      const open = await this.deps.orders.countOpenOutsideMarketLimitOrders(this.deps.chainId, owner, now);
      if (open >= policy.maxLimitOrdersPerOwner) {
        throw new OrderBookError('TooManyLimitOrders', `at most ${policy.maxLimitOrdersPerOwner} open limit orders outside the market price per owner`);
      }
    }
    return outsideMarket;
  }

  /** 12. `metadata.validFrom` of the app data, at least the minimum validity before validTo. */
  private checkValidFrom(fields: OrderFields, document: AppDataDocument | null): number | null {
    const validFrom = document?.protocol.validFrom ?? null;
    if (validFrom !== null && fields.validTo < validFrom + this.deps.policy.minValidity) throw new OrderBookError('InvalidValidFrom', 'validTo must be at least 60 s after metadata.validFrom');
    return validFrom;
  }

  /**
   * 14. Persist: one atomic insert of the order, its quote and its `created` event; a new app-data document or a
   * replacement (cancel the old order) share one transaction with it.
   */
  private async persist(order: NewOrder, quote: StoredQuote | null, newDocument: string | null, replaced: StoredOrder | null): Promise<void> {
    const { orders, appData, chainId } = this.deps;
    const duplicate = () => new OrderBookError('DuplicateOrder', 'order already exists');
    if (newDocument === null && replaced === null) {
      if (!(await orders.insert(order, quote))) throw duplicate();
      return;
    }
    await orders.transaction(async (tx) => {
      if (newDocument !== null) await appData.put(newDocument, order.appData, tx);
      if (replaced) {
        if (!(order.signingScheme === 'eip712' || order.signingScheme === 'ethsign')) throw new OrderBookError('InvalidSignature', 'a replacement order must be signed with eip712 or ethsign');
        if (replaced.owner !== order.owner) throw new OrderBookError('WrongOwner', 'the replaced order belongs to another owner');
        await orders.markCancelled(chainId, [replaced.uid], tx);
      }
      // a duplicate rolls back the replacement's cancellation with it
      if (!(await orders.insert(order, quote, tx))) throw duplicate();
    });
  }

  /**
   * 1., 3. The app-data hash and document of an order (before signatures: a wrong hash makes recovery
   * meaningless); `newDocument` is the full text to store with the accepted order (step 14), if sent and not stored yet.
   */
  private async resolveAppData(body: OrderCreationBody): Promise<ResolvedAppData> {
    const isHash = HASH_RE.test(body.appData) && !body.appDataHash;
    if (isHash) {
      const hash = body.appData.toLowerCase() as Hex;
      const text = await this.deps.appData.get(hash);
      if (text === null) throw new OrderBookError('InvalidAppData', `Unknown pre-image for app data hash ${hash}; upload it with PUT /api/v1/app_data/${hash} first`);
      return { hash, document: parseStored(text), newDocument: null };
    }
    let document: AppDataDocument;
    try {
      document = parseAppDataDocument(body.appData);
    } catch (err) {
      if (err instanceof AppDataError) throw new OrderBookError('InvalidAppData', err.message);
      throw err;
    }
    if (body.appDataHash && body.appDataHash.toLowerCase() !== document.hash) {
      throw new OrderBookError('AppDataHashMismatch', `computed appDataHash ${document.hash} doesn't match expected ${body.appDataHash.toLowerCase()}`);
    }
    if (document.protocol.enableFastPath) throw new OrderBookError('InvalidAppData', 'metadata.enableFastPath is not supported');
    // a document stored already (orders often share one) has nothing to store with the order: no transaction
    const { stored } = await this.deps.appData.check(body.appData, document.hash);
    return { hash: document.hash, document, newDocument: stored ? null : body.appData };
  }

  private async verifySignature(body: OrderCreationBody, digest: Hex, claimedOwner: Address | null): Promise<{ owner: Address; signature: Hex }> {
    const raw = body.signature.toLowerCase() as Hex;
    switch (body.signingScheme) {
      case 'eip712':
      case 'ethsign': {
        let recovered: Address;
        try {
          recovered = (await recoverOrderSigner({ scheme: body.signingScheme, signature: raw, digest }, this.deps.recoverAddress)).toLowerCase() as Address;
        } catch (err) {
          if (err instanceof SignatureError) throw new OrderBookError('InvalidSignature', `signature could not be verified: ${err.message}`);
          throw err;
        }
        if (claimedOwner && recovered !== claimedOwner) {
          throw new OrderBookError('InvalidSignature', `recovered signer ${recovered} does not match from address ${claimedOwner} (check the signing domain, scheme and signed fields)`);
        }
        return { owner: recovered, signature: raw };
      }
      case 'presign': {
        if (!claimedOwner) throw new OrderBookError('MissingFrom', 'presign orders need `from` (the owner that will call setPreSignature)');
        if (raw !== '0x' && raw !== claimedOwner) throw new OrderBookError('InvalidSignature', 'a presign signature is empty (0x) or the 20-byte owner address');
        return { owner: claimedOwner, signature: claimedOwner };
      }
      case 'eip1271': {
        if (!claimedOwner) throw new OrderBookError('MissingFrom', 'eip1271 orders need `from` (the smart-contract owner)');
        const ok = await this.deps.chain.isValidSignature1271(claimedOwner, digest, raw);
        if (!ok) throw new OrderBookError('InvalidSignature', `isValidSignature on ${claimedOwner} did not return the EIP-1271 magic value for this order`);
        return { owner: claimedOwner, signature: raw };
      }
    }
  }

  /** Loads an order that may still be cancelled, or throws the cancellation error that applies. */
  async loadCancellable(uid: Hex): Promise<StoredOrder> {
    const order = await this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
    if (!order) throw new OrderBookError('OrderNotFound', `order ${uid} was not found`);
    if (isFullyExecuted(order)) throw new OrderBookError('OrderFullyExecuted', 'the order is already fully executed');
    if (isInvalidated(order)) throw new OrderBookError('AlreadyCancelled', 'the order is already cancelled');
    if (order.validTo < this.deps.policy.now()) throw new OrderBookError('OrderExpired', 'the order has already expired');
    return order;
  }

  async get(uid: Hex): Promise<Record<string, unknown> | null> {
    const order = await this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
    if (!order) return null;
    const fees = await this.executedFees([order]);
    return toOrderRecord(order, this.deps.policy.now(), fees.get(order.uid));
  }

  /** Network + protocol fees of each order's executions (none before a trade, or without a fee reader). */
  private async executedFees(orders: StoredOrder[]): Promise<Map<Hex, bigint>> {
    const executed = orders.filter((o) => o.executedSell > 0n || o.executedBuy > 0n).map((o) => o.uid);
    return this.deps.tradeFees && executed.length > 0 ? this.deps.tradeFees.executedFees(executed) : new Map();
  }

  private async records(orders: StoredOrder[]): Promise<Record<string, unknown>[]> {
    const now = this.deps.policy.now();
    const fees = await this.executedFees(orders);
    return orders.map((o) => toOrderRecord(o, now, fees.get(o.uid)));
  }

  async getMany(uids: Hex[]): Promise<Record<string, unknown>[]> {
    return this.records(await this.deps.orders.getMany(this.deps.chainId, uids.map((u) => u.toLowerCase() as Hex)));
  }

  async byOwner(owner: Address, offset: number, limit: number): Promise<Record<string, unknown>[]> {
    return this.records(await this.deps.orders.byOwner(this.deps.chainId, owner.toLowerCase() as Address, offset, limit));
  }

  async byTransaction(txHash: Hex): Promise<Record<string, unknown>[]> {
    return this.records(await this.deps.orders.byTransaction(this.deps.chainId, txHash.toLowerCase() as Hex));
  }

  async status(uid: Hex): Promise<ReturnType<typeof orderStatus> | null> {
    const order = await this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
    return order ? orderStatus(order, this.deps.policy.now()) : null;
  }

  async stored(uid: Hex): Promise<StoredOrder | null> {
    return this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
  }
}

/** 0. Amounts as decimal strings within uint256 (overflow has its own errorType, spec §7), addresses lowercase. */
function readOrderFields(body: OrderCreationBody): OrderFields {
  const sellAmount = amount(body.sellAmount, 'sellAmount', 'SellAmountOverflow');
  const buyAmount = amount(body.buyAmount, 'buyAmount', 'BuyAmountOverflow');
  const feeAmount = amount(body.feeAmount, 'feeAmount', 'SellAmountOverflow');
  if (sellAmount + feeAmount > MAX_UINT256) throw new OrderBookError('SellAmountOverflow', 'sellAmount + feeAmount exceeds uint256');
  return {
    sellToken: body.sellToken.toLowerCase() as Address,
    buyToken: body.buyToken.toLowerCase() as Address,
    receiver: body.receiver && body.receiver.toLowerCase() !== ZERO_ADDRESS ? (body.receiver.toLowerCase() as Address) : null,
    from: body.from ? (body.from.toLowerCase() as Address) : null,
    sellAmount,
    buyAmount,
    feeAmount,
    validTo: body.validTo,
    kind: body.kind,
    partiallyFillable: body.partiallyFillable ?? false,
    sellTokenBalance: body.sellTokenBalance ?? 'erc20',
    buyTokenBalance: body.buyTokenBalance ?? 'erc20',
  };
}

/** 6. Amounts must be non-zero. */
function checkNonZeroAmounts(fields: OrderFields): void {
  if (fields.sellAmount === 0n || fields.buyAmount === 0n) throw new OrderBookError('ZeroAmount', 'sellAmount and buyAmount must be greater than zero');
}

/** 11. Quote gas + hook gas + EIP-1271 verification gas within the upstream limit. */
function checkGas(quote: StoredQuote | null, document: AppDataDocument | null, scheme: OrderCreationBody['signingScheme']): void {
  const orderGas = (quote?.gasAmount ?? 0n) + hookGas(document?.protocol.hooks ?? NO_ORDER_HOOKS) + (scheme === 'eip1271' ? EIP1271_VERIFICATION_GAS : 0n);
  if (orderGas > MAX_ORDER_GAS) throw new OrderBookError('TooMuchGas', `the order needs ${orderGas} gas (quote, hooks and signature check); the limit is ${MAX_ORDER_GAS}`);
}

function parseStored(text: string): AppDataDocument | null {
  try {
    return parseAppDataDocument(text);
  } catch {
    return null;
  }
}

function amount(value: string, field: string, overflowType: string): bigint {
  try {
    return parseUint256(value, field);
  } catch (err) {
    if (err instanceof AmountError) {
      if (err.kind === 'overflow') throw new OrderBookError(overflowType, `${field} exceeds the uint256 maximum (2^256 - 1)`);
      throw new OrderBookError('InvalidParameter', `${field} must be a decimal string of digits`);
    }
    throw err;
  }
}

/** reference orderbook.md §7.5: is the order's limit price worse than the quote's (so it will not fill now)? */
export function isOutsideMarket(kind: 'sell' | 'buy', sellAmount: bigint, buyAmount: bigint, quote: StoredQuote): boolean {
  if (quote.sellAmount === 0n) return true;
  if (kind === 'buy') return sellAmount * quote.buyAmount < (quote.sellAmount + quote.feeAmount) * buyAmount;
  return sellAmount * (quote.buyAmount - (quote.feeAmount * quote.buyAmount) / quote.sellAmount) < quote.sellAmount * buyAmount;
}
