/**
 * Order intake: POST /api/v1/orders runs the validation pipeline of reference orderbook.md §5 in that order,
 * with the spec's error names (§4.3: the spec decides), then stores the order. Reads and status live here too.
 */
import type { Address, Hex } from 'viem';
import {
  AmountError,
  AppDataError,
  BUY_ETH_ADDRESS,
  SignatureError,
  ZERO_ADDRESS,
  computeOrderUid,
  hookGas,
  MAX_ORDER_GAS,
  NO_ORDER_HOOKS,
  orderDigest,
  orderDomain,
  parseAppDataDocument,
  parseUint256,
  recoverOrderSigner,
  type AppDataDocument,
  type Order,
} from '../../protocol/index.js';
import { OrderBookError } from '../order-book-error.js';
import type { AppDataService } from '../app-data.js';
import type { StoredQuote } from '../quotes/stored-quote.js';
import { EIP1271_VERIFICATION_GAS } from '../quotes/quote-service.js';
import type { OrderRepository, StoredOrder } from './order-repository.js';
import type { OrderChainReads, OrderPolicy, OrderQuoter } from './order-ports.js';
import { isFullyExecuted, isInvalidated, orderStatus } from './order-status.js';
import { toOrderRecord } from './order-record.js';

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
}

export class OrderService {
  constructor(private readonly deps: OrderServiceDeps) {}

  /** Validates and stores a signed order; returns its UID. Throws OrderBookError with the spec's errorType. */
  async create(body: OrderCreationBody): Promise<Hex> {
    const { chainId, settlement, policy } = this.deps;
    const now = policy.now();

    // 0. amounts: decimal strings within uint256 (overflow has its own errorType, spec §7)
    const sellAmount = amount(body.sellAmount, 'sellAmount', 'SellAmountOverflow');
    const buyAmount = amount(body.buyAmount, 'buyAmount', 'BuyAmountOverflow');
    const feeAmount = amount(body.feeAmount, 'feeAmount', 'SellAmountOverflow');
    if (sellAmount + feeAmount > (1n << 256n) - 1n) throw new OrderBookError('SellAmountOverflow', 'sellAmount + feeAmount exceeds uint256');

    const sellToken = body.sellToken.toLowerCase() as Address;
    const buyToken = body.buyToken.toLowerCase() as Address;
    const receiver = body.receiver && body.receiver.toLowerCase() !== ZERO_ADDRESS ? (body.receiver.toLowerCase() as Address) : null;
    const from = body.from ? (body.from.toLowerCase() as Address) : null;
    const partiallyFillable = body.partiallyFillable ?? false;
    const sellTokenBalance = body.sellTokenBalance ?? 'erc20';
    const buyTokenBalance = body.buyTokenBalance ?? 'erc20';

    // 1.–3. app data: resolve the document and its hash (before signatures: a wrong hash makes recovery meaningless);
    //      a new document is stored only with the accepted order (step 14)
    const { hash: appDataHash, document, newDocument } = await this.resolveAppData(body);

    // 2. replacement of an earlier order named in the app data
    const replacedUid = document?.protocol.replacedOrderUid ?? null;
    const replaced = replacedUid ? await this.loadCancellable(replacedUid) : null;

    // 4. signature → owner
    const order: Order = {
      sellToken, buyToken, receiver, sellAmount, buyAmount, validTo: body.validTo, appData: appDataHash, feeAmount,
      kind: body.kind, partiallyFillable, sellTokenBalance, buyTokenBalance,
    };
    const digest = orderDigest(order, orderDomain(chainId, settlement));
    const signer = document?.protocol.signer ?? null;
    if (from && signer && from !== signer) throw new OrderBookError('AppdataFromMismatch', `from ${from} does not match app-data metadata.signer ${signer}`);
    const claimedOwner = from ?? signer;
    const { owner, signature } = await this.verifySignature(body, digest, claimedOwner);

    // 5. UID, and an early duplicate check (the insert checks again)
    const uid = computeOrderUid(digest, owner, body.validTo);
    if (await this.deps.orders.exists(chainId, uid)) throw new OrderBookError('DuplicateOrder', 'order already exists');

    // 6. amounts must be non-zero
    if (sellAmount === 0n || buyAmount === 0n) throw new OrderBookError('ZeroAmount', 'sellAmount and buyAmount must be greater than zero');

    // 7. order-level rules (the same as for quotes). Since CIP-38 every API order is a zero-fee limit order
    //    (NonZeroFee below); whether it is inside the market comes from its quote and limit price (step 10).
    const orderClass = 'limit' as const;
    if (policy.bannedAddresses.has(owner) || (receiver && policy.bannedAddresses.has(receiver))) {
      throw new OrderBookError('Forbidden', 'Forbidden, your account is deny-listed');
    }
    if (buyTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedBuyTokenDestination', `buyTokenBalance ${buyTokenBalance} is not supported`);
    if (sellTokenBalance !== 'erc20') throw new OrderBookError('UnsupportedSellTokenSource', `sellTokenBalance ${sellTokenBalance} is not supported`);
    if (body.validTo < now) throw new OrderBookError('OrderExpired', `validTo ${body.validTo} is in the past (now ${now}; validTo is in seconds)`);
    if (body.validTo < now + policy.minValidity) throw new OrderBookError('InsufficientValidTo', `validTo must be at least ${policy.minValidity} s in the future`);
    // presign orders too: unbounded validity would let anyone park orders in another owner's name for ever
    if (body.validTo > now + policy.maxLimitValidity) throw new OrderBookError('ExcessiveValidTo', `validTo must be at most ${policy.maxLimitValidity} s in the future for a limit order`);
    if (sellToken === buyToken) throw new OrderBookError('SameBuyAndSellToken', 'sellToken and buyToken are the same');
    if (buyToken === BUY_ETH_ADDRESS && this.deps.wrappedNative && sellToken === this.deps.wrappedNative.toLowerCase()) {
      throw new OrderBookError('SameBuyAndSellToken', 'selling the wrapped native token for the native token is an unwrap, not a trade');
    }
    if (sellToken === BUY_ETH_ADDRESS) throw new OrderBookError('InvalidNativeSellToken', 'the native token cannot be sold directly; wrap it first');
    for (const token of [sellToken, buyToken]) {
      if (policy.deniedTokens.has(token)) throw new OrderBookError('UnsupportedToken', `token ${token} is deny listed`);
    }

    // 8. funds: balance and allowance to the vault relayer ≥ sellAmount + feeAmount (spec); presign owners
    //    usually approve in the same transaction as setPreSignature, so they are checked at auction time
    if (body.signingScheme !== 'presign') {
      const needed = sellAmount + feeAmount;
      const { balance, allowance } = await this.deps.chain.balanceAndAllowance(owner, sellToken, document?.protocol.hooks.pre ?? []);
      if (balance < needed) throw new OrderBookError('InsufficientBalance', `owner balance ${balance} of ${sellToken} is below sellAmount + feeAmount = ${needed}`);
      if (allowance < needed) throw new OrderBookError('InsufficientAllowance', `allowance ${allowance} to the vault relayer is below sellAmount + feeAmount = ${needed}; approve the vault relayer, not the settlement`);
    }

    // 9. quote: by id, else stored, else fresh (limit orders tolerate NoLiquidity). A signed fee is refused (CIP-38).
    if (feeAmount !== 0n) throw new OrderBookError('NonZeroFee', 'feeAmount must be 0: since CIP-38 the network fee is taken from the surplus; fold the quoted fee into sellAmount');
    let quote: StoredQuote | null = null;
    try {
      quote = await this.deps.quoter.quoteForOrder({
        quoteId: body.quoteId ?? null, sellToken, buyToken, kind: body.kind, sellAmount, buyAmount, feeAmount, from: owner,
        signingScheme: body.signingScheme, appData: appDataHash, validTo: body.validTo,
      });
    } catch (err) {
      if (!(err instanceof OrderBookError && err.errorType === 'NoLiquidity')) throw err;
    }

    // 11. gas: quote gas + hook gas + EIP-1271 verification gas within the upstream limit
    const orderGas = (quote?.gasAmount ?? 0n) + hookGas(document?.protocol.hooks ?? NO_ORDER_HOOKS) + (body.signingScheme === 'eip1271' ? EIP1271_VERIFICATION_GAS : 0n);
    if (orderGas > MAX_ORDER_GAS) throw new OrderBookError('TooMuchGas', `the order needs ${orderGas} gas (quote, hooks and signature check); the limit is ${MAX_ORDER_GAS}`);

    // 10. limit orders outside the market count towards a per-owner cap; presign orders only once signed on
    //     chain (anyone may post one in any owner's name), so a new one never hits the cap
    const outsideMarket = quote === null || isOutsideMarket(body.kind, sellAmount, buyAmount, quote);
    if (outsideMarket && body.signingScheme !== 'presign') {
      const open = await this.deps.orders.countOpenOutsideMarketLimitOrders(chainId, owner, now);
      if (open >= policy.maxLimitOrdersPerOwner) {
        throw new OrderBookError('TooManyLimitOrders', `at most ${policy.maxLimitOrdersPerOwner} open limit orders outside the market price per owner`);
      }
    }

    // 12. validFrom from app data
    const validFrom = document?.protocol.validFrom ?? null;
    if (validFrom !== null && body.validTo < validFrom + policy.minValidity) throw new OrderBookError('InvalidValidFrom', 'validTo must be at least 60 s after metadata.validFrom');

    // 14. persist (replacement: cancel the old order and insert the new one atomically)
    const newOrder = {
      chainId, uid, owner, sellToken, buyToken, receiver, sellAmount, buyAmount, validTo: body.validTo, appData: appDataHash, feeAmount,
      kind: body.kind, partiallyFillable, signature, signingScheme: body.signingScheme, sellTokenBalance, buyTokenBalance,
      class: orderClass, settlementContract: settlement, outsideMarket, validFrom,
    } as const;
    const inserted = await this.deps.orders.transaction(async (tx) => {
      if (newDocument !== null) await this.deps.appData.put(newDocument, appDataHash, tx);
      if (replaced) {
        if (!(body.signingScheme === 'eip712' || body.signingScheme === 'ethsign')) throw new OrderBookError('InvalidSignature', 'a replacement order must be signed with eip712 or ethsign');
        if (replaced.owner !== owner) throw new OrderBookError('WrongOwner', 'the replaced order belongs to another owner');
        await this.deps.orders.markCancelled(chainId, [replaced.uid], tx);
      }
      return this.deps.orders.insert(newOrder, quote, tx);
    });
    if (!inserted) throw new OrderBookError('DuplicateOrder', 'order already exists');
    return uid;
  }

  /** The app-data hash and document of an order; `newDocument` is the full text to store with the order, if sent. */
  private async resolveAppData(body: OrderCreationBody): Promise<{ hash: Hex; document: AppDataDocument | null; newDocument: string | null }> {
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
    await this.deps.appData.check(body.appData, document.hash);
    return { hash: document.hash, document, newDocument: body.appData };
  }

  private async verifySignature(body: OrderCreationBody, digest: Hex, claimedOwner: Address | null): Promise<{ owner: Address; signature: Hex }> {
    const raw = body.signature.toLowerCase() as Hex;
    switch (body.signingScheme) {
      case 'eip712':
      case 'ethsign': {
        let recovered: Address;
        try {
          recovered = (await recoverOrderSigner({ scheme: body.signingScheme, signature: raw, digest })).toLowerCase() as Address;
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
    return order ? toOrderRecord(order, this.deps.policy.now()) : null;
  }

  async getMany(uids: Hex[]): Promise<Record<string, unknown>[]> {
    const orders = await this.deps.orders.getMany(this.deps.chainId, uids.map((u) => u.toLowerCase() as Hex));
    const now = this.deps.policy.now();
    return orders.map((o) => toOrderRecord(o, now));
  }

  async byOwner(owner: Address, offset: number, limit: number): Promise<Record<string, unknown>[]> {
    const orders = await this.deps.orders.byOwner(this.deps.chainId, owner.toLowerCase() as Address, offset, limit);
    const now = this.deps.policy.now();
    return orders.map((o) => toOrderRecord(o, now));
  }

  async byTransaction(txHash: Hex): Promise<Record<string, unknown>[]> {
    const orders = await this.deps.orders.byTransaction(this.deps.chainId, txHash.toLowerCase() as Hex);
    const now = this.deps.policy.now();
    return orders.map((o) => toOrderRecord(o, now));
  }

  async status(uid: Hex): Promise<ReturnType<typeof orderStatus> | null> {
    const order = await this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
    return order ? orderStatus(order, this.deps.policy.now()) : null;
  }

  async stored(uid: Hex): Promise<StoredOrder | null> {
    return this.deps.orders.get(this.deps.chainId, uid.toLowerCase() as Hex);
  }
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
