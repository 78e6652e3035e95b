/**
 * The GPv2Settlement ABI fragments batchbook uses (settle, pre-signatures, invalidation, reads and
 * the events the indexer follows), as typed viem ABI arrays. Checked against `GPV2_SETTLEMENT_ABI`.
 */

const TRADE_COMPONENTS = [
  { name: 'sellTokenIndex', type: 'uint256' },
  { name: 'buyTokenIndex', type: 'uint256' },
  { name: 'receiver', type: 'address' },
  { name: 'sellAmount', type: 'uint256' },
  { name: 'buyAmount', type: 'uint256' },
  { name: 'validTo', type: 'uint32' },
  { name: 'appData', type: 'bytes32' },
  { name: 'feeAmount', type: 'uint256' },
  { name: 'flags', type: 'uint256' },
  { name: 'executedAmount', type: 'uint256' },
  { name: 'signature', type: 'bytes' },
] as const;

const INTERACTION_COMPONENTS = [
  { name: 'target', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'callData', type: 'bytes' },
] as const;

/** `settle(tokens, clearingPrices, trades, interactions[3])`. */
export const SETTLE_ABI = [
  {
    type: 'function',
    name: 'settle',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'tokens', type: 'address[]' },
      { name: 'clearingPrices', type: 'uint256[]' },
      { name: 'trades', type: 'tuple[]', components: TRADE_COMPONENTS },
      { name: 'interactions', type: 'tuple[][3]', components: INTERACTION_COMPONENTS },
    ],
    outputs: [],
  },
] as const;

/** State-changing calls owners make directly: pre-sign and on-chain cancellation. */
export const SETTLEMENT_OWNER_ABI = [
  {
    type: 'function',
    name: 'setPreSignature',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'orderUid', type: 'bytes' },
      { name: 'signed', type: 'bool' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'invalidateOrder',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'orderUid', type: 'bytes' }],
    outputs: [],
  },
] as const;

/** Views: filled amounts, pre-signature state, domain separator, vault relayer. */
export const SETTLEMENT_READ_ABI = [
  {
    type: 'function',
    name: 'filledAmount',
    stateMutability: 'view',
    inputs: [{ name: '', type: 'bytes' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'preSignature',
    stateMutability: 'view',
    inputs: [{ name: '', type: 'bytes' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'domainSeparator',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'bytes32' }],
  },
  {
    type: 'function',
    name: 'vaultRelayer',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'address' }],
  },
] as const;

/** Events the indexer follows. */
export const SETTLEMENT_EVENTS_ABI = [
  {
    type: 'event',
    name: 'Trade',
    anonymous: false,
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'sellToken', type: 'address', indexed: false },
      { name: 'buyToken', type: 'address', indexed: false },
      { name: 'sellAmount', type: 'uint256', indexed: false },
      { name: 'buyAmount', type: 'uint256', indexed: false },
      { name: 'feeAmount', type: 'uint256', indexed: false },
      { name: 'orderUid', type: 'bytes', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'Settlement',
    anonymous: false,
    inputs: [{ name: 'solver', type: 'address', indexed: true }],
  },
  {
    type: 'event',
    name: 'OrderInvalidated',
    anonymous: false,
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'orderUid', type: 'bytes', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'PreSignature',
    anonymous: false,
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'orderUid', type: 'bytes', indexed: false },
      { name: 'signed', type: 'bool', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'Interaction',
    anonymous: false,
    inputs: [
      { name: 'target', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
      { name: 'selector', type: 'bytes4', indexed: false },
    ],
  },
] as const;

/** Every fragment above in one ABI. */
export const SETTLEMENT_ABI = [...SETTLE_ABI, ...SETTLEMENT_OWNER_ABI, ...SETTLEMENT_READ_ABI, ...SETTLEMENT_EVENTS_ABI] as const;
