/**
 * The Solver Engine API's wire types (`POST /solve`, `POST /notify`) as TypeBox schemas, after the upstream
 * document `crates/solvers/openapi.yml` with its known errata applied (production's own wire types win):
 * `Allowance` carries `amount`, `LiquidityInteraction.id` is a string, `Call.callData` is one hex string, and
 * `TokenInfo.decimals`/`symbol`/`referencePrice` may be null. Amounts decode to bigint and encode back to
 * decimal strings (`Type.Transform`); prices (U256) likewise; fees and weights stay decimal strings.
 * Objects accept properties the document does not name (it never forbids them) and keep them on a round trip.
 */
import { Type, type StaticDecode, type StaticEncode, type TSchema } from '@sinclair/typebox';

const UINT = '^(0|[1-9][0-9]{0,77})$';
const INT = '^-?(0|[1-9][0-9]{0,77})$';

/** A 256-bit unsigned integer in decimal notation ↔ bigint. */
export const Uint = Type.Transform(Type.String({ pattern: UINT, description: 'unsigned integer in decimal notation' }))
  .Decode((v) => BigInt(v))
  .Encode((v: bigint) => v.toString());
/** A signed integer in decimal notation ↔ bigint (I128). */
export const Int = Type.Transform(Type.String({ pattern: INT, description: 'signed integer in decimal notation' }))
  .Decode((v) => BigInt(v))
  .Encode((v: bigint) => v.toString());

export const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
export const Hex = Type.String({ pattern: '^0x([0-9a-fA-F]{2})*$' });
export const Bytes32 = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
export const OrderUid = Type.String({ pattern: '^0x[0-9a-fA-F]{112}$' });
/** An arbitrary-precision decimal value ("0.003"). */
export const Decimal = Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const open = { additionalProperties: true } as const;

export const TokenInfo = Type.Object(
  {
    decimals: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 255 }))),
    symbol: Type.Optional(Nullable(Type.String())),
    referencePrice: Type.Optional(Nullable(Uint)),
    availableBalance: Uint,
    trusted: Type.Boolean(),
  },
  open,
);

export const OrderKind = Type.Union([Type.Literal('sell'), Type.Literal('buy')]);
export const SigningScheme = Type.Union([Type.Literal('eip712'), Type.Literal('ethSign'), Type.Literal('preSign'), Type.Literal('eip1271')]);
export const SellTokenBalance = Type.Union([Type.Literal('erc20'), Type.Literal('internal'), Type.Literal('external')]);
export const BuyTokenBalance = Type.Union([Type.Literal('erc20'), Type.Literal('internal')]);

export const InteractionData = Type.Object({ target: Address, value: Uint, callData: Hex }, open);

/**
 * A fee policy as production's services send it (reference fees.md §6 erratum): externally tagged, camelCase,
 * factors as numbers in [0, 1), the quote's amounts as decimal strings — not the `kind`-tagged shape the
 * document describes, which the service neither sends nor parses.
 */
const Factor = Type.Number({ minimum: 0, exclusiveMaximum: 1 });
const FeeQuote = Type.Object({ sellAmount: Uint, buyAmount: Uint, fee: Uint }, open);
export const FeePolicy = Type.Union([
  Type.Object({ surplus: Type.Object({ factor: Factor, maxVolumeFactor: Factor }, open) }, open),
  Type.Object({ priceImprovement: Type.Object({ factor: Factor, maxVolumeFactor: Factor, quote: FeeQuote }, open) }, open),
  Type.Object({ volume: Type.Object({ factor: Factor }, open) }, open),
]);

export const Asset = Type.Object({ token: Address, amount: Uint }, open);
export const Allowance = Type.Object({ token: Address, spender: Address, amount: Uint }, open);

export const LiquidityInteraction = Type.Object(
  { kind: Type.Literal('liquidity'), internalize: Type.Optional(Type.Boolean()), id: Type.String(), inputToken: Address, outputToken: Address, inputAmount: Uint, outputAmount: Uint },
  open,
);
export const CustomInteraction = Type.Object(
  {
    kind: Type.Literal('custom'),
    internalize: Type.Optional(Type.Boolean()),
    target: Address,
    value: Uint,
    callData: Hex,
    allowances: Type.Optional(Type.Array(Allowance)),
    inputs: Type.Array(Asset),
    outputs: Type.Array(Asset),
  },
  open,
);
export const Interaction = Type.Union([LiquidityInteraction, CustomInteraction]);

const FlashloanFields = { liquidityProvider: Address, protocolAdapter: Address, receiver: Address, token: Address, amount: Uint };
export const Flashloan = Type.Object(FlashloanFields, open);

export const Order = Type.Object(
  {
    uid: OrderUid,
    sellToken: Address,
    buyToken: Address,
    sellAmount: Uint,
    fullSellAmount: Type.Optional(Uint),
    buyAmount: Uint,
    fullBuyAmount: Uint,
    feePolicies: Type.Optional(Type.Array(FeePolicy)),
    validTo: Type.Integer({ minimum: 0, maximum: 0xffffffff }),
    kind: OrderKind,
    receiver: Type.Optional(Nullable(Address)),
    owner: Address,
    partiallyFillable: Type.Boolean(),
    preInteractions: Type.Array(Interaction),
    postInteractions: Type.Array(InteractionData),
    sellTokenSource: SellTokenBalance,
    buyTokenDestination: BuyTokenBalance,
    class: Type.Union([Type.Literal('market'), Type.Literal('limit')]),
    appData: Bytes32,
    flashloanHint: Type.Optional(Type.Object(FlashloanFields, open)),
    signingScheme: SigningScheme,
    signature: Hex,
  },
  open,
);

const LiquidityCommon = { id: Type.String(), address: Address, gasEstimate: Uint };
const TokenReserve = Type.Object({ balance: Uint }, open);
export const ConstantProductPool = Type.Object(
  { kind: Type.Literal('constantProduct'), tokens: Type.Record(Address, TokenReserve), fee: Decimal, router: Address, ...LiquidityCommon },
  open,
);
export const WeightedProductPool = Type.Object(
  {
    kind: Type.Literal('weightedProduct'),
    tokens: Type.Record(Address, Type.Object({ balance: Uint, scalingFactor: Type.Optional(Decimal), weight: Decimal }, open)),
    fee: Decimal,
    version: Type.Optional(Type.Union([Type.Literal('v0'), Type.Literal('v3Plus')])),
    balancer_pool_id: Bytes32,
    ...LiquidityCommon,
  },
  open,
);
export const StablePool = Type.Object(
  {
    kind: Type.Literal('stable'),
    tokens: Type.Record(Address, Type.Object({ balance: Uint, scalingFactor: Decimal }, open)),
    amplificationParameter: Decimal,
    fee: Decimal,
    balancer_pool_id: Bytes32,
    ...LiquidityCommon,
  },
  open,
);
export const ConcentratedLiquidityPool = Type.Object(
  {
    kind: Type.Literal('concentratedLiquidity'),
    tokens: Type.Array(Address),
    sqrtPrice: Uint,
    liquidity: Uint,
    tick: Type.Integer({ minimum: -2147483648, maximum: 2147483647 }),
    liquidityNet: Type.Record(Type.String({ pattern: INT }), Int),
    fee: Decimal,
    router: Address,
    ...LiquidityCommon,
  },
  open,
);
export const ForeignLimitOrder = Type.Object(
  { kind: Type.Literal('limitOrder'), makerToken: Address, takerToken: Address, makerAmount: Uint, takerAmount: Uint, takerTokenFeeAmount: Uint, ...LiquidityCommon },
  open,
);
export const Liquidity = Type.Union([ConstantProductPool, WeightedProductPool, StablePool, ConcentratedLiquidityPool, ForeignLimitOrder]);

export const Auction = Type.Object(
  {
    id: Type.Optional(Nullable(Type.String())),
    tokens: Type.Record(Address, TokenInfo),
    orders: Type.Array(Order),
    liquidity: Type.Array(Liquidity),
    effectiveGasPrice: Uint,
    deadline: Type.String({ format: 'date-time' }),
    surplusCapturingJitOrderOwners: Type.Array(Address),
  },
  open,
);

export const JitOrder = Type.Object(
  {
    sellToken: Address,
    buyToken: Address,
    receiver: Address,
    sellAmount: Uint,
    buyAmount: Uint,
    validTo: Type.Integer({ minimum: 0, maximum: 0xffffffff }),
    appData: Bytes32,
    kind: OrderKind,
    partiallyFillable: Type.Optional(Type.Boolean()),
    sellTokenBalance: SellTokenBalance,
    buyTokenBalance: BuyTokenBalance,
    signingScheme: SigningScheme,
    signature: Hex,
  },
  open,
);
export const Fulfillment = Type.Object({ kind: Type.Literal('fulfillment'), order: OrderUid, fee: Type.Optional(Uint), executedAmount: Uint }, open);
export const JitTrade = Type.Object({ kind: Type.Literal('jit'), order: JitOrder, executedAmount: Uint, fee: Uint }, open);
export const Trade = Type.Union([Fulfillment, JitTrade]);

export const Call = Type.Object({ target: Address, value: Uint, callData: Hex }, open);

export const Solution = Type.Object(
  {
    id: Type.Integer({ minimum: 0 }),
    prices: Type.Record(Address, Uint),
    trades: Type.Array(Trade),
    preInteractions: Type.Optional(Type.Array(Call)),
    interactions: Type.Array(Interaction),
    postInteractions: Type.Optional(Type.Array(Call)),
    gas: Type.Optional(Type.Integer({ minimum: 0 })),
    maxFeePerGas: Type.Optional(Uint),
    maxPriorityFeePerGas: Type.Optional(Uint),
    flashloans: Type.Optional(Type.Record(OrderUid, Flashloan)),
  },
  open,
);

export const SolveResponse = Type.Object({ solutions: Type.Array(Solution) }, open);

export const NOTIFY_KINDS = [
  'timeout',
  'emptySolution',
  'duplicatedSolutionId',
  'simulationFailed',
  'invalidClearingPrices',
  'missingPrice',
  'invalidExecutedAmount',
  'nonBufferableTokensUsed',
  'solverAccountInsufficientBalance',
  'success',
  'revert',
  'driverError',
  'cancelled',
  'fail',
  'postprocessingTimedOut',
  'banned',
] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];
export const NotifyKindSchema = Type.Union([Type.Literal('timeout'), Type.Literal('emptySolution'), Type.Literal('duplicatedSolutionId'), Type.Literal('simulationFailed'), Type.Literal('invalidClearingPrices'), Type.Literal('missingPrice'), Type.Literal('invalidExecutedAmount'), Type.Literal('nonBufferableTokensUsed'), Type.Literal('solverAccountInsufficientBalance'), Type.Literal('success'), Type.Literal('revert'), Type.Literal('driverError'), Type.Literal('cancelled'), Type.Literal('fail'), Type.Literal('postprocessingTimedOut'), Type.Literal('banned')]);
export const Notification = Type.Object(
  {
    auctionId: Type.Optional(Nullable(Type.String())),
    solutionId: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    kind: NotifyKindSchema,
  },
  open,
);

export type WireAuction = StaticEncode<typeof Auction>;
export type SolverAuction = StaticDecode<typeof Auction>;
export type SolverOrder = StaticDecode<typeof Order>;
export type SolverLiquidity = StaticDecode<typeof Liquidity>;
export type SolverConstantProductPool = StaticDecode<typeof ConstantProductPool>;
export type WireSolution = StaticEncode<typeof Solution>;
export type SolverSolution = StaticDecode<typeof Solution>;
export type SolverInteraction = StaticDecode<typeof Interaction>;
export type SolverTrade = StaticDecode<typeof Trade>;
export type SolverSolveResponse = StaticDecode<typeof SolveResponse>;
export type WireNotification = StaticDecode<typeof Notification>;
