/**
 * Turns raw logs into typed events, by the role of the emitting address (settlement, tracked token, tracked
 * pool, pool factory) and topic0. Pure; malformed logs (wrong topic count, short data) are skipped and counted.
 *
 * @example
 *   const { events } = decodeLogs(logs, { settlement, tokens: new Set([weth]), pools: new Set(), factories: new Set() });
 */
import { decodeAbiParameters, hexToBigInt, type Address, type Hex } from 'viem';
import { computeOrderUid, decodeEthFlowPlacementData, orderDigest, ORDER_STRING_HASHES, type Order } from '../../protocol/index.js';
import { TOPICS } from './event-topics.js';

export interface RawLog {
  address: Hex;
  topics: readonly Hex[];
  data: Hex;
  blockNumber: number;
  blockHash: Hex;
  logIndex: number;
  transactionHash: Hex;
}

export interface LogRef {
  blockNumber: number;
  logIndex: number;
  txHash: Hex;
}

export interface TradeEvent extends LogRef {
  owner: Address;
  sellToken: Address;
  buyToken: Address;
  sellAmount: bigint;
  buyAmount: bigint;
  feeAmount: bigint;
  orderUid: Hex;
}
export interface SettlementEvent extends LogRef { solver: Address }
export interface InvalidationEvent extends LogRef { owner: Address; orderUid: Hex }
export interface PreSignatureEvent extends LogRef { owner: Address; orderUid: Hex; signed: boolean }
export interface InteractionEvent extends LogRef { target: Address; value: bigint; selector: Hex }
export interface TransferEvent extends LogRef {
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
  /** WETH-style Deposit (a mint to `to`) and Withdrawal (a burn from `from`) are transfers from/to zero */
  kind: 'transfer' | 'deposit' | 'withdrawal';
}
export interface SyncEvent extends LogRef { pool: Address; reserve0: bigint; reserve1: bigint }
export interface SwapEvent extends LogRef {
  pool: Address;
  sender: Address;
  to: Address;
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}
export interface PairCreatedEvent extends LogRef { factory: Address; token0: Address; token1: Address; pair: Address }
/** An eth-flow contract's OrderPlacement: the order it owns (as the settlement hashes it), its UID, the user's data. */
export interface EthFlowPlacementEvent extends LogRef {
  contract: Address;
  sender: Address;
  orderUid: Hex;
  /** from the on-chain signature: the address in its data (EIP-1271) or the sender (pre-sign) */
  owner: Address;
  order: Order;
  signingScheme: 'eip1271' | 'presign';
  signature: Hex;
  quoteId: bigint;
  userValidTo: number;
}
export interface EthFlowInvalidationEvent extends LogRef { contract: Address; orderUid: Hex }
export interface EthFlowRefundEvent extends LogRef { contract: Address; orderUid: Hex; refunder: Address }

export interface DecodedEvents {
  trades: TradeEvent[];
  settlements: SettlementEvent[];
  invalidations: InvalidationEvent[];
  presignatures: PreSignatureEvent[];
  interactions: InteractionEvent[];
  transfers: TransferEvent[];
  syncs: SyncEvent[];
  swaps: SwapEvent[];
  pairs: PairCreatedEvent[];
  ethflowPlacements: EthFlowPlacementEvent[];
  ethflowInvalidations: EthFlowInvalidationEvent[];
  ethflowRefunds: EthFlowRefundEvent[];
}

/** Lowercase addresses by role. */
export interface LogRoles {
  settlement: string;
  tokens: ReadonlySet<string>;
  pools: ReadonlySet<string>;
  factories: ReadonlySet<string>;
  /** eth-flow contracts (OrderPlacement, OrderInvalidation, OrderRefund) */
  ethFlows?: ReadonlySet<string>;
  /** the settlement's EIP-712 domain separator, for the UIDs of eth-flow placements (required with ethFlows) */
  orderDomain?: Hex;
}

export const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

export function emptyEvents(): DecodedEvents {
  return { trades: [], settlements: [], invalidations: [], presignatures: [], interactions: [], transfers: [], syncs: [], swaps: [], pairs: [], ethflowPlacements: [], ethflowInvalidations: [], ethflowRefunds: [] };
}

const topicAddress = (topic: Hex): Address => `0x${topic.slice(26).toLowerCase()}` as Address;
const dataWords = (data: Hex): number => (data.length - 2) / 64;
const word = (data: Hex, i: number): bigint => hexToBigInt(`0x${data.slice(2 + i * 64, 2 + (i + 1) * 64)}`);
const wordAddress = (data: Hex, i: number): Address => `0x${data.slice(2 + i * 64 + 24, 2 + (i + 1) * 64).toLowerCase()}` as Address;

function decodeSettlementLog(log: RawLog, ref: LogRef, out: DecodedEvents): boolean {
  const [topic0, topic1] = log.topics;
  if (log.topics.length !== 2) return false;
  switch (topic0) {
    case TOPICS.Trade: {
      const [sellToken, buyToken, sellAmount, buyAmount, feeAmount, orderUid] = decodeAbiParameters(
        [{ type: 'address' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
        log.data,
      );
      out.trades.push({ ...ref, owner: topicAddress(topic1), sellToken: sellToken.toLowerCase() as Address, buyToken: buyToken.toLowerCase() as Address, sellAmount, buyAmount, feeAmount, orderUid: orderUid.toLowerCase() as Hex });
      return true;
    }
    case TOPICS.Settlement:
      out.settlements.push({ ...ref, solver: topicAddress(topic1) });
      return true;
    case TOPICS.OrderInvalidated: {
      const [orderUid] = decodeAbiParameters([{ type: 'bytes' }], log.data);
      out.invalidations.push({ ...ref, owner: topicAddress(topic1), orderUid: orderUid.toLowerCase() as Hex });
      return true;
    }
    case TOPICS.PreSignature: {
      const [orderUid, signed] = decodeAbiParameters([{ type: 'bytes' }, { type: 'bool' }], log.data);
      out.presignatures.push({ ...ref, owner: topicAddress(topic1), orderUid: orderUid.toLowerCase() as Hex, signed });
      return true;
    }
    case TOPICS.Interaction: {
      if (dataWords(log.data) < 2) return false;
      out.interactions.push({ ...ref, target: topicAddress(topic1), value: word(log.data, 0), selector: `0x${log.data.slice(66, 74).toLowerCase()}` as Hex });
      return true;
    }
    default:
      return false;
  }
}

function decodeTokenLog(log: RawLog, ref: LogRef, out: DecodedEvents): boolean {
  const token = log.address.toLowerCase() as Address;
  const topic0 = log.topics[0];
  if (topic0 === TOPICS.Transfer) {
    // ERC-721 shares the signature but indexes the token id (4 topics, no data)
    if (log.topics.length !== 3 || dataWords(log.data) < 1) return false;
    out.transfers.push({ ...ref, token, from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), value: word(log.data, 0), kind: 'transfer' });
    return true;
  }
  if (topic0 === TOPICS.Deposit || topic0 === TOPICS.Withdrawal) {
    if (log.topics.length !== 2 || dataWords(log.data) < 1) return false;
    const holder = topicAddress(log.topics[1]);
    const deposit = topic0 === TOPICS.Deposit;
    out.transfers.push({
      ...ref,
      token,
      from: deposit ? ZERO_ADDRESS : holder,
      to: deposit ? holder : ZERO_ADDRESS,
      value: word(log.data, 0),
      kind: deposit ? 'deposit' : 'withdrawal',
    });
    return true;
  }
  return false;
}

function decodePoolLog(log: RawLog, ref: LogRef, out: DecodedEvents): boolean {
  const pool = log.address.toLowerCase() as Address;
  const topic0 = log.topics[0];
  if (topic0 === TOPICS.Sync) {
    if (log.topics.length !== 1 || dataWords(log.data) < 2) return false;
    out.syncs.push({ ...ref, pool, reserve0: word(log.data, 0), reserve1: word(log.data, 1) });
    return true;
  }
  if (topic0 === TOPICS.Swap) {
    if (log.topics.length !== 3 || dataWords(log.data) < 4) return false;
    out.swaps.push({
      ...ref,
      pool,
      sender: topicAddress(log.topics[1]),
      to: topicAddress(log.topics[2]),
      amount0In: word(log.data, 0),
      amount1In: word(log.data, 1),
      amount0Out: word(log.data, 2),
      amount1Out: word(log.data, 3),
    });
    return true;
  }
  return false;
}

function decodeFactoryLog(log: RawLog, ref: LogRef, out: DecodedEvents): boolean {
  if (log.topics[0] !== TOPICS.PairCreated || log.topics.length !== 3 || dataWords(log.data) < 2) return false;
  out.pairs.push({ ...ref, factory: log.address.toLowerCase() as Address, token0: topicAddress(log.topics[1]), token1: topicAddress(log.topics[2]), pair: wordAddress(log.data, 0) });
  return true;
}

const GPV2_ORDER_TUPLE = {
  type: 'tuple',
  components: [
    { type: 'address', name: 'sellToken' },
    { type: 'address', name: 'buyToken' },
    { type: 'address', name: 'receiver' },
    { type: 'uint256', name: 'sellAmount' },
    { type: 'uint256', name: 'buyAmount' },
    { type: 'uint32', name: 'validTo' },
    { type: 'bytes32', name: 'appData' },
    { type: 'uint256', name: 'feeAmount' },
    { type: 'bytes32', name: 'kind' },
    { type: 'bool', name: 'partiallyFillable' },
    { type: 'bytes32', name: 'sellTokenBalance' },
    { type: 'bytes32', name: 'buyTokenBalance' },
  ],
} as const;
const ONCHAIN_SIGNATURE_TUPLE = { type: 'tuple', components: [{ type: 'uint8', name: 'scheme' }, { type: 'bytes', name: 'data' }] } as const;

/** keccak256 of a marker string → its name (kind and balance markers of an on-chain order) */
const byHash = <T extends string>(names: readonly T[]): Map<string, T> =>
  new Map(names.map((n) => [(ORDER_STRING_HASHES as Record<string, Hex>)[n]!.toLowerCase(), n]));
const KINDS = byHash(['sell', 'buy'] as const);
const SELL_BALANCES = byHash(['erc20', 'external', 'internal'] as const);
const BUY_BALANCES = byHash(['erc20', 'internal'] as const);

/**
 * An eth-flow contract's log. A placement whose `data` is not the 12 packed bytes, whose markers are unknown or
 * whose signature scheme is neither EIP-1271 nor pre-sign is not an order: skipped (as production drops it).
 */
function decodeEthFlowLog(log: RawLog, ref: LogRef, roles: LogRoles, out: DecodedEvents): boolean {
  const contract = log.address.toLowerCase() as Address;
  const topic0 = log.topics[0];
  if (topic0 === TOPICS.OrderPlacement) {
    if (log.topics.length !== 2 || !roles.orderDomain) return false;
    const [raw, signature, data] = decodeAbiParameters([GPV2_ORDER_TUPLE, ONCHAIN_SIGNATURE_TUPLE, { type: 'bytes' }], log.data);
    const placement = decodeEthFlowPlacementData(data);
    const kind = KINDS.get(raw.kind.toLowerCase());
    const sellTokenBalance = SELL_BALANCES.get(raw.sellTokenBalance.toLowerCase());
    const buyTokenBalance = BUY_BALANCES.get(raw.buyTokenBalance.toLowerCase());
    if (!placement || !kind || !sellTokenBalance || !buyTokenBalance) return false;
    const sender = topicAddress(log.topics[1]!);
    let owner: Address;
    if (signature.scheme === 0 && signature.data.length === 42) owner = signature.data.toLowerCase() as Address;
    else if (signature.scheme === 1) owner = sender;
    else return false;
    const receiver = raw.receiver.toLowerCase() as Address;
    const order: Order = {
      sellToken: raw.sellToken.toLowerCase() as Address,
      buyToken: raw.buyToken.toLowerCase() as Address,
      receiver: receiver === ZERO_ADDRESS ? null : receiver,
      sellAmount: raw.sellAmount,
      buyAmount: raw.buyAmount,
      validTo: raw.validTo,
      appData: raw.appData.toLowerCase() as Hex,
      feeAmount: raw.feeAmount,
      kind,
      partiallyFillable: raw.partiallyFillable,
      sellTokenBalance,
      buyTokenBalance,
    };
    const orderUid = computeOrderUid(orderDigest(order, roles.orderDomain), owner, order.validTo);
    out.ethflowPlacements.push({
      ...ref,
      contract,
      sender,
      orderUid,
      owner,
      order,
      signingScheme: signature.scheme === 0 ? 'eip1271' : 'presign',
      signature: signature.data.toLowerCase() as Hex,
      quoteId: placement.quoteId,
      userValidTo: placement.userValidTo,
    });
    return true;
  }
  if (topic0 === TOPICS.OrderInvalidation) {
    if (log.topics.length !== 1) return false;
    const [orderUid] = decodeAbiParameters([{ type: 'bytes' }], log.data);
    if (orderUid.length !== 114) return false;
    out.ethflowInvalidations.push({ ...ref, contract, orderUid: orderUid.toLowerCase() as Hex });
    return true;
  }
  if (topic0 === TOPICS.OrderRefund) {
    if (log.topics.length !== 2) return false;
    const [orderUid] = decodeAbiParameters([{ type: 'bytes' }], log.data);
    if (orderUid.length !== 114) return false;
    out.ethflowRefunds.push({ ...ref, contract, orderUid: orderUid.toLowerCase() as Hex, refunder: topicAddress(log.topics[1]!) });
    return true;
  }
  return false;
}

export function decodeLogs(logs: readonly RawLog[], roles: LogRoles, into: DecodedEvents = emptyEvents()): { events: DecodedEvents; skipped: number } {
  let skipped = 0;
  for (const log of logs) {
    const address = log.address.toLowerCase();
    const ref: LogRef = { blockNumber: log.blockNumber, logIndex: log.logIndex, txHash: log.transactionHash.toLowerCase() as Hex };
    let used = false;
    try {
      if (address === roles.settlement) used = decodeSettlementLog(log, ref, into) || used;
      if (roles.tokens.has(address)) used = decodeTokenLog(log, ref, into) || used;
      if (roles.pools.has(address)) used = decodePoolLog(log, ref, into) || used;
      if (roles.factories.has(address)) used = decodeFactoryLog(log, ref, into) || used;
      if (roles.ethFlows?.has(address)) used = decodeEthFlowLog(log, ref, roles, into) || used;
    } catch {
      used = false;
    }
    if (!used) skipped++;
  }
  return { events: into, skipped };
}

export interface Touched {
  orderUids: Hex[];
  owners: Address[];
  tokens: Address[];
  pools: Address[];
}

/** What a batch of events changed, for listeners (lowercase, deduplicated). The zero address is left out. */
export function touchedBy(events: DecodedEvents): Touched {
  const orderUids = new Set<string>();
  const owners = new Set<string>();
  const tokens = new Set<string>();
  const pools = new Set<string>();
  for (const t of events.trades) {
    orderUids.add(t.orderUid);
    owners.add(t.owner);
    tokens.add(t.sellToken);
    tokens.add(t.buyToken);
  }
  for (const e of events.invalidations) {
    orderUids.add(e.orderUid);
    owners.add(e.owner);
  }
  for (const e of events.presignatures) {
    orderUids.add(e.orderUid);
    owners.add(e.owner);
  }
  for (const e of events.transfers) {
    tokens.add(e.token);
    owners.add(e.from);
    owners.add(e.to);
  }
  for (const e of events.ethflowPlacements) {
    orderUids.add(e.orderUid);
    owners.add(e.owner);
    owners.add(e.sender);
  }
  for (const e of [...events.ethflowInvalidations, ...events.ethflowRefunds]) orderUids.add(e.orderUid);
  for (const e of events.syncs) pools.add(e.pool);
  for (const e of events.swaps) pools.add(e.pool);
  for (const e of events.pairs) pools.add(e.pair);
  owners.delete(ZERO_ADDRESS);
  return { orderUids: [...orderUids] as Hex[], owners: [...owners] as Address[], tokens: [...tokens] as Address[], pools: [...pools] as Address[] };
}

export function mergeTouched(a: Touched, b: Touched): Touched {
  const merge = <T extends string>(x: T[], y: T[]): T[] => [...new Set([...x, ...y])];
  return { orderUids: merge(a.orderUids, b.orderUids), owners: merge(a.owners, b.owners), tokens: merge(a.tokens, b.tokens), pools: merge(a.pools, b.pools) };
}

export function isEmptyTouched(t: Touched): boolean {
  return t.orderUids.length + t.owners.length + t.tokens.length + t.pools.length === 0;
}
