/**
 * batchbook's pure protocol core: networks, order EIP-712 hashing, UIDs, signatures, cancellations,
 * app data, amounts and settlement encoding. No I/O, no environment reads, no import-time effects.
 */
export { ProtocolError } from './protocol-error.js';

export {
  SETTLEMENT_ADDRESS,
  VAULT_RELAYER_ADDRESS,
  BARN_SETTLEMENT_ADDRESS,
  BARN_VAULT_RELAYER_ADDRESS,
  BUY_ETH_ADDRESS,
  ZERO_ADDRESS,
} from './contract-addresses.js';
export { NETWORKS, networkByName, networkByChainId, parseChainParam } from './networks.js';
export type { Network, NetworkName, NativeCurrency } from './networks.js';

export { normalizeAddress, AddressError } from './normalize-address.js';
export { parseUint256, formatAmount, AmountError, MAX_UINT256 } from './uint256-amount.js';
export type { AmountErrorKind } from './uint256-amount.js';

export { ORDER_TYPE_STRING, ORDER_TYPE_HASH, ORDER_TYPES, ORDER_STRING_HASHES } from './order.js';
export type { Order, OrderKind, SellTokenBalance, BuyTokenBalance } from './order.js';
export { orderDomain, domainSeparator, DOMAIN_NAME, DOMAIN_VERSION, EIP712_DOMAIN_TYPE_HASH } from './order-domain.js';
export type { OrderDomain } from './order-domain.js';
export { typedDataDigest } from './typed-data-digest.js';
export { hashOrderStruct, orderDigest, orderTypedData } from './hash-order.js';
export { computeOrderUid, parseOrderUid, UidError, ORDER_UID_LENGTH } from './order-uid.js';
export type { OrderUidParts, UidErrorCode } from './order-uid.js';

export { SIGNING_SCHEMES } from './signing-scheme.js';
export type { SigningScheme, EcdsaSigningScheme } from './signing-scheme.js';
export { normalizeEcdsaSignature, recoverEcdsaSigner, SignatureError, type RecoverAddress } from './ecdsa-signature.js';
export type { SignatureErrorCode, RecoverEcdsaSignerParameters } from './ecdsa-signature.js';
export { recoverOrderSigner } from './recover-order-signer.js';
export type { RecoverOrderSignerParameters } from './recover-order-signer.js';
export { encodeSettlementSignature, EIP1271_MAGIC_VALUE, EIP1271_ABI } from './settlement-signature.js';

export {
  ORDER_CANCELLATION_TYPE_STRING,
  ORDER_CANCELLATION_TYPE_HASH,
  ORDER_CANCELLATIONS_TYPE_STRING,
  ORDER_CANCELLATIONS_TYPE_HASH,
  ORDER_CANCELLATION_TYPES,
  ORDER_CANCELLATIONS_TYPES,
  hashOrderCancellationStruct,
  hashOrderCancellationsStruct,
  orderCancellationDigest,
  orderCancellationsDigest,
  orderCancellationTypedData,
  orderCancellationsTypedData,
} from './order-cancellation.js';
export { recoverCancellationSigner } from './recover-cancellation-signer.js';
export type { RecoverCancellationSignerParameters } from './recover-cancellation-signer.js';

export { appDataHash, EMPTY_APP_DATA_JSON, EMPTY_APP_DATA_HASH, ZERO_APP_DATA } from './app-data-hash.js';
export { parseAppDataDocument, AppDataError, MAX_APP_DATA_BYTES } from './app-data-document.js';
export type { AppDataDocument, AppDataErrorCode, AppDataHook, PartnerFee, ProtocolAppData } from './app-data-document.js';

export {
  orderHooksOf,
  hookGas,
  trampolineGas,
  trampolineInteraction,
  permitHooks,
  permitGrant,
  HOOKS_TRAMPOLINE_ABI,
  MAX_ORDER_GAS,
  NO_ORDER_HOOKS,
} from './order-hooks.js';
export { executedAmount, remainingAmount, isFullyExecuted } from './order-fill.js';
export type { OrderFill } from './order-fill.js';
export type { HookType, OrderHooks, PermitHook } from './order-hooks.js';

export { encodeTradeFlags, decodeTradeFlags, TradeFlagsError } from './trade-flags.js';
export type { TradeFlags } from './trade-flags.js';
export { SETTLE_ABI, SETTLEMENT_OWNER_ABI, SETTLEMENT_READ_ABI, SETTLEMENT_EVENTS_ABI, SETTLEMENT_ABI } from './settlement-abi.js';
export { GPV2_SETTLEMENT_ABI } from './gpv2-settlement-abi.js';
export { encodeSettle } from './encode-settle.js';
export type { Settlement, SettlementTrade, SettlementInteraction } from './encode-settle.js';

export { DEFAULT_FEE_POLICIES, FeeScheduleError, parseFeeFactor, parseFeeSchedule, feePolicyJson, feePolicyFromJson } from './fee-policy.js';
export type { FeePolicy, FeePolicyJson, FeeQuote, ConfiguredPolicy, ScheduledPolicy } from './fee-policy.js';
export { isOutsideMarket, cappedPartnerShares, partnerFeePolicies, orderFeePolicies, quoteVolumeFactor } from './fee-selection.js';
export type { FeeOrder, OrderFeePolicyInput } from './fee-selection.js';
export { mulFactor, quoteAdjustedLimits, chargeFeePolicies, feesFromExecution, feeInSellToken, factorInBps, volumeFeeAdjustedQuote } from './fee-charge.js';
export type { ChargeInput, ChargedTrade, FeeLimitOrder } from './fee-charge.js';
export {
  ETHFLOW_ABI,
  ETHFLOW_VALID_TO,
  ETHFLOW_PRODUCTION_ADDRESSES,
  WRAP_ALL_CALLDATA,
  decodeEthFlowPlacementData,
  encodeEthFlowPlacementData,
  ethFlowGpv2Order,
  ethFlowOrderUid,
} from './ethflow.js';
export type { EthFlowOrderData, EthFlowPlacementData } from './ethflow.js';
