/** Response schemas of the order-book records (documentation in /docs, and checked against real responses in tests). */
import { Type } from '@sinclair/typebox';
import { Address, DecimalAmount, Hex32, HexBytes, OrderUid } from '../schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Interaction = Type.Object({ target: Address, value: DecimalAmount, callData: HexBytes });

export const OrderRecord = Type.Object(
  {
    creationDate: Type.String({ format: 'date-time' }),
    owner: Address,
    uid: OrderUid,
    availableBalance: Type.Null(),
    executedBuyAmount: DecimalAmount,
    executedSellAmount: DecimalAmount,
    executedSellAmountBeforeFees: DecimalAmount,
    executedFeeAmount: DecimalAmount,
    executedFee: DecimalAmount,
    executedFeeToken: Address,
    invalidated: Type.Boolean(),
    status: Type.Union([Type.Literal('open'), Type.Literal('fulfilled'), Type.Literal('cancelled'), Type.Literal('expired'), Type.Literal('presignaturePending')]),
    class: Type.Union([Type.Literal('market'), Type.Literal('limit'), Type.Literal('liquidity')]),
    settlementContract: Address,
    isLiquidityOrder: Type.Boolean(),
    fullAppData: Nullable(Type.String()),
    sellToken: Address,
    buyToken: Address,
    receiver: Nullable(Address),
    sellAmount: DecimalAmount,
    buyAmount: DecimalAmount,
    validTo: Type.Integer(),
    appData: Hex32,
    feeAmount: DecimalAmount,
    kind: Type.Union([Type.Literal('sell'), Type.Literal('buy')]),
    partiallyFillable: Type.Boolean(),
    sellTokenBalance: Type.String(),
    buyTokenBalance: Type.String(),
    signingScheme: Type.String(),
    signature: HexBytes,
    interactions: Type.Object({ pre: Type.Array(Interaction), post: Type.Array(Interaction) }),
    onchainUser: Type.Optional(Address),
    onchainOrderData: Type.Optional(
      Type.Object({
        sender: Address,
        placementError: Type.Union([Type.Null(), ...['preValidationError', 'nonZeroFee', 'other', 'validToTooFarInTheFuture', 'disabledOrderClass', 'invalidQuote', 'insufficientFee', 'invalidOrderData'].map((e) => Type.Literal(e))]),
      }),
    ),
    ethflowData: Type.Optional(
      Type.Object({ userValidTo: Type.Integer(), refundTxHash: Type.Union([Hex32, Type.Null()]), isRefunded: Type.Boolean() }),
    ),
    validFrom: Type.Optional(Type.Integer()),
    quote: Type.Optional(
      Type.Object({
        gasAmount: Type.String(), gasPrice: Type.String(), sellTokenPrice: Type.String(), sellAmount: DecimalAmount, buyAmount: DecimalAmount,
        feeAmount: DecimalAmount, solver: Type.String(), verified: Type.Boolean(),
      }),
    ),
  },
  { description: 'Order record (reference orderbook.md §9.1)' },
);

export const TradeRecord = Type.Object({
  blockNumber: Type.Integer(),
  logIndex: Type.Integer(),
  orderUid: OrderUid,
  owner: Address,
  sellToken: Address,
  buyToken: Address,
  sellAmount: DecimalAmount,
  sellAmountBeforeFees: DecimalAmount,
  buyAmount: DecimalAmount,
  txHash: Nullable(Hex32),
  executedProtocolFees: Type.Array(Type.Unknown()),
});

export const CompetitionStatus = Type.Object({
  type: Type.Union(['open', 'scheduled', 'active', 'solved', 'executing', 'traded', 'cancelled'].map((s) => Type.Literal(s))),
  value: Type.Optional(Type.Array(Type.Object({ solver: Type.String(), executedAmounts: Type.Optional(Type.Object({ sell: DecimalAmount, buy: DecimalAmount })) }))),
});
