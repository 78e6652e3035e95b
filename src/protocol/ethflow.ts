/**
 * ETH-flow: selling native ETH through an on-chain order contract. The contract owns an ordinary GPv2 order that
 * sells the wrapped native token (EIP-1271, validTo 2^32 − 1); the user's own deadline and the quote id travel in
 * the `OrderPlacement` event's 12-byte `data`. The ABI, the production addresses, the placement `data` codec and
 * the UID rule. Pure: no I/O.
 */
import { concat, hexToBigInt, numberToHex, parseAbi, type Address, type Hex } from 'viem';
import type { Order } from './order.js';
import { orderDigest } from './hash-order.js';
import type { OrderDomain } from './order-domain.js';
import { computeOrderUid } from './order-uid.js';

/** The eth-flow contract's ABI: functions, events and custom errors, as the production contract has them. */
export const ETHFLOW_ABI = parseAbi([
  'struct EthFlowOrder { address buyToken; address receiver; uint256 sellAmount; uint256 buyAmount; bytes32 appData; uint256 feeAmount; uint32 validTo; bool partiallyFillable; int64 quoteId; }',
  'struct GPv2Order { address sellToken; address buyToken; address receiver; uint256 sellAmount; uint256 buyAmount; uint32 validTo; bytes32 appData; uint256 feeAmount; bytes32 kind; bool partiallyFillable; bytes32 sellTokenBalance; bytes32 buyTokenBalance; }',
  'struct OnchainSignature { uint8 scheme; bytes data; }',
  'function createOrder(EthFlowOrder order) payable returns (bytes32 orderHash)',
  'function invalidateOrder(EthFlowOrder order)',
  'function invalidateOrdersIgnoringNotAllowed(EthFlowOrder[] orders)',
  'function orders(bytes32 orderHash) view returns (address owner, uint32 validTo)',
  'function isValidSignature(bytes32 orderHash, bytes signature) view returns (bytes4)',
  'function wrapAll()',
  'function wrap(uint256 amount)',
  'function unwrap(uint256 amount)',
  'function cowSwapSettlement() view returns (address)',
  'function wrappedNativeToken() view returns (address)',
  'event OrderPlacement(address indexed sender, GPv2Order order, OnchainSignature signature, bytes data)',
  'event OrderInvalidation(bytes orderUid)',
  'event OrderRefund(bytes orderUid, address indexed refunder)',
  'error IncorrectEthAmount()',
  'error NotAllowedZeroSellAmount()',
  'error OrderIsAlreadyExpired()',
  'error OrderIsAlreadyOwned(bytes32 orderHash)',
  'error ReceiverMustBeSet()',
  'error NotAllowedToInvalidateOrder(bytes32 orderHash)',
  'error EthTransferFailed()',
]);

/** The argument of `createOrder` / `invalidateOrder` (EthFlowOrder.Data). */
export interface EthFlowOrderData {
  buyToken: Address;
  receiver: Address;
  sellAmount: bigint;
  buyAmount: bigint;
  appData: Hex;
  feeAmount: bigint;
  /** the user's deadline (unix seconds); not part of the GPv2 order */
  validTo: number;
  partiallyFillable: boolean;
  /** the API quote id; travels only in the placement event */
  quoteId: bigint;
}

/** The GPv2 order's validTo: eth-flow orders never expire at the protocol level (the contract enforces the user's). */
export const ETHFLOW_VALID_TO = 0xffffffff;

/** Calldata of `wrapAll()`: the pre-interaction every eth-flow order carries. */
export const WRAP_ALL_CALLDATA: Hex = '0x4c84c1c8';

/**
 * The production eth-flow contracts per chain (lowercase), current deployment first, then the older ones the
 * production backend still indexes. Chain 31337 has none: the devnet deploys its own.
 */
const PROD = '0xba3cb449bd2b4adddbc894d8697f5170800eadec';
export const ETHFLOW_PRODUCTION_ADDRESSES: Readonly<Record<number, readonly Address[]>> = {
  1: [PROD, '0x40a50cf069e992aa4536211b23f286ef88752187'],
  100: [PROD, '0x40a50cf069e992aa4536211b23f286ef88752187'],
  11155111: [PROD, '0x0b7795e18767259cc253a2df471db34c72b49516'],
  42161: [PROD, '0x6dfe75b5ddce1ade279d4fa6bd6aef3cbb6f49db'],
  8453: [PROD, '0x3c3ea1829891bc9bec3d06a81d5d169e52a415e3'],
  10: [PROD],
  56: [PROD],
  137: [PROD],
  9745: [PROD],
  43114: [PROD],
  57073: [PROD],
  59144: [PROD],
};

/** The placement's user deadline and quote id, decoded from the event's `data`. */
export interface EthFlowPlacementData {
  quoteId: bigint;
  userValidTo: number;
}

/**
 * Decodes the 12 packed bytes of `OrderPlacement.data` (int64 quoteId ‖ uint32 validTo, big-endian); null for any
 * other length (such an event is not an eth-flow placement and is skipped).
 *
 * @example
 * decodeEthFlowPlacementData('0x00000000000000056553f100') // { quoteId: 5n, userValidTo: 1700000000 }
 */
export function decodeEthFlowPlacementData(data: Hex): EthFlowPlacementData | null {
  if (!/^0x[0-9a-fA-F]{24}$/.test(data)) return null;
  const raw = hexToBigInt(`0x${data.slice(2, 18)}`);
  const quoteId = raw >= 1n << 63n ? raw - (1n << 64n) : raw;
  return { quoteId, userValidTo: Number.parseInt(data.slice(18), 16) };
}

/** The inverse of {@link decodeEthFlowPlacementData}. */
export function encodeEthFlowPlacementData({ quoteId, userValidTo }: EthFlowPlacementData): Hex {
  const word = quoteId < 0n ? quoteId + (1n << 64n) : quoteId;
  return concat([numberToHex(word, { size: 8 }), numberToHex(userValidTo, { size: 4 })]);
}

/** The GPv2 order the contract owns for `order`: sells the wrapped native token, never expires, sell kind, erc20. */
export function ethFlowGpv2Order(order: Omit<EthFlowOrderData, 'validTo' | 'quoteId'>, wrappedNative: Address): Order {
  return {
    sellToken: wrappedNative,
    buyToken: order.buyToken,
    receiver: order.receiver,
    sellAmount: order.sellAmount,
    buyAmount: order.buyAmount,
    validTo: ETHFLOW_VALID_TO,
    appData: order.appData,
    feeAmount: order.feeAmount,
    kind: 'sell',
    partiallyFillable: order.partiallyFillable,
    sellTokenBalance: 'erc20',
    buyTokenBalance: 'erc20',
  };
}

/**
 * The order UID of an eth-flow order: digest ‖ contract ‖ 0xffffffff (what `createOrder` returns is the digest).
 *
 * @example
 * ethFlowOrderUid(order, { ethFlow, wrappedNative: weth, domain: orderDomain(31337) })
 */
export function ethFlowOrderUid(
  order: Omit<EthFlowOrderData, 'validTo' | 'quoteId'>,
  where: { ethFlow: Address; wrappedNative: Address; domain: OrderDomain | Hex },
): Hex {
  const digest = orderDigest(ethFlowGpv2Order(order, where.wrappedNative), where.domain);
  return computeOrderUid(digest, where.ethFlow.toLowerCase() as Address, ETHFLOW_VALID_TO);
}
