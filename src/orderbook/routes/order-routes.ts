/**
 * Orders, cancellations, trades and per-user reads of the order book (spec §4.8; reference orderbook.md §3).
 */
import { Type } from '@sinclair/typebox';
import type { Address, Hex } from 'viem';
import type { HttpServer } from '../../http/server.js';
import { ORDERBOOK_BODY_LIMIT, rateLimitFor, sendJson } from '../../http/server.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { Address as AddressSchema, BuyTokenBalance, DecimalAmount, EcdsaScheme, Hex32, HexBytes, OrderKind, OrderUid, SellTokenBalance, SigningScheme, errorResponses } from '../schemas.js';
import { MAX_CANCELLATION_UIDS } from '../orders/cancellation-service.js';
import type { OrderBookRouteContext } from './context.js';
import { CompetitionStatus, OrderRecord, TradeRecord } from './record-schemas.js';

export const OrderCreation = Type.Object({
  sellToken: AddressSchema,
  buyToken: AddressSchema,
  receiver: Type.Optional(Type.Union([AddressSchema, Type.Null()])),
  sellAmount: DecimalAmount,
  buyAmount: DecimalAmount,
  validTo: Type.Integer({ minimum: 0, maximum: 4294967295 }),
  feeAmount: DecimalAmount,
  kind: OrderKind,
  partiallyFillable: Type.Optional(Type.Boolean({ default: false })),
  sellTokenBalance: Type.Optional(SellTokenBalance),
  buyTokenBalance: Type.Optional(BuyTokenBalance),
  signingScheme: SigningScheme,
  signature: HexBytes,
  from: Type.Optional(Type.Union([AddressSchema, Type.Null()])),
  quoteId: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])),
  appData: Type.String({ description: 'the full app-data JSON document, or its 32-byte hash (uploaded before)' }),
  appDataHash: Type.Optional(Type.Union([Hex32, Type.Null()])),
  fullBalanceCheck: Type.Optional(Type.Boolean()),
});

const UidParams = Type.Object({ UID: OrderUid });
const CancelOneBody = Type.Object({ signature: HexBytes, signingScheme: EcdsaScheme });
const CancelManyBody = Type.Object({ orderUids: Type.Array(OrderUid, { maxItems: MAX_CANCELLATION_UIDS }), signature: HexBytes, signingScheme: EcdsaScheme });
const Cancelled = Type.Literal('Cancelled');

export function registerOrderRoutes(server: HttpServer, ctx: OrderBookRouteContext): void {
  const { orders, cancellations, trades } = ctx.services;
  const ob = { api: 'orderbook' as const };
  const tags = ['orderbook'];

  server.post(
    '/api/v1/orders',
    {
      schema: { tags, summary: 'Submit a signed order', body: OrderCreation, response: { 201: OrderUid, ...errorResponses(400, 401, 403, 404, 413, 429, 500) } },
      bodyLimit: ORDERBOOK_BODY_LIMIT,
      config: { ...ob, orderIntake: true, rateLimit: rateLimitFor(ctx.rateLimit, 'orders') },
    },
    async (req, reply) => sendJson(reply, 201, await orders.create(req.body)),
  );

  server.get(
    '/api/v1/orders/:UID',
    { schema: { tags, summary: 'Order by UID', params: UidParams, response: { 200: OrderRecord, ...errorResponses(400, 404) } }, config: ob },
    async (req, reply) => {
      const order = await orders.get(req.params.UID as Hex);
      if (!order) throw new OrderBookError('NotFound', 'Order was not found');
      return sendJson(reply, 200, order);
    },
  );

  server.get(
    '/api/v1/orders/:UID/status',
    { schema: { tags, summary: 'Where the order is in the competition', params: UidParams, response: { 200: CompetitionStatus, ...errorResponses(400, 404) } }, config: ob },
    async (req, reply) => {
      const status = await ctx.services.competitionStatus(req.params.UID as Hex);
      if (!status) throw new OrderBookError('NotFound', 'Order was not found');
      return sendJson(reply, 200, status);
    },
  );

  server.post(
    '/api/v1/orders/by_uids',
    {
      schema: { tags, summary: 'Orders by UIDs (at most 128)', body: Type.Array(OrderUid, { maxItems: MAX_CANCELLATION_UIDS }), response: { 200: Type.Array(Type.Object({ order: OrderRecord })), ...errorResponses(400) } },
      bodyLimit: ORDERBOOK_BODY_LIMIT,
      config: ob,
    },
    async (req, reply) => sendJson(reply, 200, (await orders.getMany(req.body as Hex[])).map((order) => ({ order }))),
  );

  server.delete(
    '/api/v1/orders/:UID',
    {
      schema: { tags, summary: 'Cancel an order (OrderCancellation or one-element OrderCancellations signature)', params: UidParams, body: CancelOneBody, response: { 200: Cancelled, ...errorResponses(400, 401, 404) } },
      bodyLimit: ORDERBOOK_BODY_LIMIT,
      config: { ...ob, rateLimit: rateLimitFor(ctx.rateLimit, 'orders') },
    },
    async (req, reply) => {
      await cancellations.cancelOne(req.params.UID as Hex, req.body);
      return sendJson(reply, 200, 'Cancelled');
    },
  );

  server.delete(
    '/api/v1/orders',
    {
      schema: { tags, summary: 'Cancel several orders with one OrderCancellations signature (all or nothing)', body: CancelManyBody, response: { 200: Cancelled, ...errorResponses(400, 401, 404) } },
      bodyLimit: ORDERBOOK_BODY_LIMIT,
      config: { ...ob, rateLimit: rateLimitFor(ctx.rateLimit, 'orders') },
    },
    async (req, reply) => {
      await cancellations.cancelMany(req.body.orderUids as Hex[], req.body);
      return sendJson(reply, 200, 'Cancelled');
    },
  );

  // offsets beyond 2^53 are not exact in JSON numbers, and the database refuses them: a 400, never a 500
  const Pagination = { offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })), limit: Type.Optional(Type.Integer({ default: 10 })) };
  // v1 pages only when asked (no defaults filled in), then exactly as v2
  const OptionalPagination = { offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })), limit: Type.Optional(Type.Integer()) };
  const tradePage = (query: { offset?: number; limit?: number }) => {
    const limit = query.limit ?? 10;
    if (limit < 1 || limit > 1000) throw new OrderBookError('InvalidLimit', 'limit must be between 1 and 1000');
    return { offset: query.offset ?? 0, limit };
  };
  const tradeFilter = (query: { owner?: string; orderUid?: string }) => ({ owner: query.owner?.toLowerCase() as Address | undefined, orderUid: query.orderUid?.toLowerCase() as Hex | undefined });

  server.get(
    '/api/v1/account/:owner/orders',
    {
      schema: { tags, summary: 'Orders of an account, newest first', params: Type.Object({ owner: AddressSchema }), querystring: Type.Object(Pagination), response: { 200: Type.Array(OrderRecord), ...errorResponses(400) } },
      config: ob,
    },
    async (req, reply) => {
      const limit = req.query.limit ?? 10;
      if (limit < 1 || limit > 1000) throw new OrderBookError('LIMIT_OUT_OF_BOUNDS', 'The pagination limit is [1,1000].');
      return sendJson(reply, 200, await orders.byOwner(req.params.owner as Address, req.query.offset ?? 0, limit));
    },
  );

  server.get(
    '/api/v1/transactions/:txHash/orders',
    { schema: { tags, summary: 'Orders settled in a transaction', params: Type.Object({ txHash: Hex32 }), response: { 200: Type.Array(OrderRecord), ...errorResponses(400) } }, config: ob },
    async (req, reply) => sendJson(reply, 200, await orders.byTransaction(req.params.txHash as Hex)),
  );

  const TradeQuery = { owner: Type.Optional(AddressSchema), orderUid: Type.Optional(OrderUid) };
  server.get(
    '/api/v1/trades',
    {
      schema: { tags, summary: 'Trades of an owner or an order (exactly one); unpaginated unless offset or limit is given, then paged as v2', querystring: Type.Object({ ...TradeQuery, ...OptionalPagination }), response: { 200: Type.Array(TradeRecord), ...errorResponses(400) } },
      config: ob,
    },
    async (req, reply) => {
      const paged = req.query.offset !== undefined || req.query.limit !== undefined;
      return sendJson(reply, 200, await trades.list(tradeFilter(req.query), paged ? tradePage(req.query) : null));
    },
  );
  server.get(
    '/api/v2/trades',
    { schema: { tags, summary: 'Trades, paginated', querystring: Type.Object({ ...TradeQuery, ...Pagination }), response: { 200: Type.Array(TradeRecord), ...errorResponses(400) } }, config: ob },
    async (req, reply) => sendJson(reply, 200, await trades.list(tradeFilter(req.query), tradePage(req.query))),
  );

  server.get(
    '/api/v1/users/:address/total_surplus',
    { schema: { tags, summary: 'Total surplus of a user, in native-token atoms', params: Type.Object({ address: AddressSchema }), response: { 200: Type.Object({ totalSurplus: DecimalAmount }), ...errorResponses(400) } }, config: ob },
    async (req, reply) => sendJson(reply, 200, { totalSurplus: (await trades.totalSurplus(req.params.address.toLowerCase() as Address)).toString() }),
  );

  server.get(
    '/api/v1/version',
    { schema: { tags, summary: 'Server version (text/plain, as upstream)', response: { 200: { description: 'Version', content: { 'text/plain': { schema: Type.String() } } } } }, config: ob },
    async (_req, reply) => reply.code(200).type('text/plain; charset=utf-8').send(ctx.version),
  );
}
