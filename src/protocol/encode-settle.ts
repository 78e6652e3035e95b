import { encodeFunctionData, type Address, type Hex } from 'viem';
import { SETTLE_ABI } from './settlement-abi.js';

/** One GPv2Trade.Data entry: an order referenced by token indices into `tokens`. */
export interface SettlementTrade {
  readonly sellTokenIndex: bigint;
  readonly buyTokenIndex: bigint;
  readonly receiver: Address;
  readonly sellAmount: bigint;
  readonly buyAmount: bigint;
  readonly validTo: number;
  readonly appData: Hex;
  readonly feeAmount: bigint;
  /** `encodeTradeFlags(...)`. */
  readonly flags: bigint;
  /** Sell amount (sell orders) or buy amount (buy orders) to execute; ignored for fill-or-kill. */
  readonly executedAmount: bigint;
  /** `encodeSettlementSignature(...)`. */
  readonly signature: Hex;
}

/** One GPv2Interaction.Data entry. */
export interface SettlementInteraction {
  readonly target: Address;
  readonly value: bigint;
  readonly callData: Hex;
}

export interface Settlement {
  readonly tokens: readonly Address[];
  /** Same length and order as `tokens`. */
  readonly clearingPrices: readonly bigint[];
  readonly trades: readonly SettlementTrade[];
  /** Pre-, intra- and post-settlement interactions. */
  readonly interactions: readonly [
    readonly SettlementInteraction[],
    readonly SettlementInteraction[],
    readonly SettlementInteraction[],
  ];
}

/**
 * Calldata of `GPv2Settlement.settle(...)`.
 *
 * @example
 * const data = encodeSettle({ tokens: [a, b], clearingPrices: [p, q], trades: [trade], interactions: [[], [], []] })
 * await walletClient.sendTransaction({ to: SETTLEMENT_ADDRESS, data })
 */
export function encodeSettle(settlement: Settlement): Hex {
  return encodeFunctionData({
    abi: SETTLE_ABI,
    functionName: 'settle',
    args: [settlement.tokens, settlement.clearingPrices, settlement.trades, settlement.interactions],
  });
}
