/** POST /api/v1/quote and GET /api/v1/token/{token}/native_price (reference orderbook.md §3.1, §3.11). */
import { Type } from '@sinclair/typebox';
import type { Address } from 'viem';
import type { HttpServer } from '../../http/server.js';
import { ORDERBOOK_BODY_LIMIT, rateLimitFor, sendJson } from '../../http/server.js';
import { OrderBookHttpError } from '../../http/errors.js';
import { Address as AddressSchema, BuyTokenBalance, DecimalAmount, Hex32, OrderKind, SellTokenBalance, SigningScheme, errorResponses } from '../schemas.js';
import type { OrderBookRouteContext } from './context.js';

export const QuoteRequest = Type.Object({
  sellToken: AddressSchema,
  buyToken: AddressSchema,
  from: AddressSchema,
  receiver: Type.Optional(Type.Union([AddressSchema, Type.Null()])),
  kind: OrderKind,
  sellAmountBeforeFee: Type.Optional(DecimalAmount),
  sellAmountAfterFee: Type.Optional(DecimalAmount),
  buyAmountAfterFee: Type.Optional(DecimalAmount),
  validTo: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
  validFor: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
  appData: Type.Optional(Type.String({ description: 'full app-data JSON document, or a 32-byte hash already uploaded' })),
  appDataHash: Type.Optional(Hex32),
  sellTokenBalance: Type.Optional(SellTokenBalance),
  buyTokenBalance: Type.Optional(BuyTokenBalance),
  signingScheme: Type.Optional(SigningScheme),
  onchainOrder: Type.Optional(Type.Boolean()),
  priceQuality: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('optimal'), Type.Literal('verified')])),
  verificationGasLimit: Type.Optional(Type.Integer({ minimum: 0 })),
  timeout: Type.Optional(Type.Integer({ minimum: 0 })),
});

const QuoteResponse = Type.Object({
  quote: Type.Object({
    sellToken: AddressSchema,
    buyToken: AddressSchema,
    receiver: Type.Union([AddressSchema, Type.Null()]),
    sellAmount: DecimalAmount,
    buyAmount: DecimalAmount,
    validTo: Type.Integer(),
    appData: Type.String(),
    appDataHash: Type.Optional(Hex32),
    feeAmount: DecimalAmount,
    gasAmount: Type.String(),
    gasPrice: Type.String(),
    sellTokenPrice: Type.String(),
    kind: OrderKind,
    partiallyFillable: Type.Boolean(),
    sellTokenBalance: Type.String(),
    buyTokenBalance: Type.String(),
    signingScheme: Type.String(),
    protocolFeeBps: Type.Optional(Type.String({ description: 'the volume fee folded into the amounts, in basis points ("2")' })),
  }),
  from: AddressSchema,
  expiration: Type.String({ format: 'date-time' }),
  id: Type.Union([Type.Integer(), Type.Null()]),
  verified: Type.Boolean(),
});

export function registerQuoteRoutes(server: HttpServer, ctx: OrderBookRouteContext): void {
  const tags = ['orderbook'];
  server.post(
    '/api/v1/quote',
    {
      schema: { tags, summary: 'Price quote for a trade', body: QuoteRequest, response: { 200: QuoteResponse, ...errorResponses(400, 403, 413, 429, 500) } },
      bodyLimit: ORDERBOOK_BODY_LIMIT,
      config: { api: 'orderbook', rateLimit: rateLimitFor(ctx.rateLimit, 'quote') },
    },
    async (req, reply) => sendJson(reply, 200, await ctx.services.quotes.quote(req.body)),
  );

  server.get(
    '/api/v1/token/:token/native_price',
    {
      schema: { tags, summary: 'Price of a token in native-token atoms per token atom', params: Type.Object({ token: AddressSchema }), response: { 200: Type.Object({ price: Type.Number() }), ...errorResponses(400, 404) } },
      config: { api: 'orderbook' },
    },
    async (req, reply) => {
      const price = await ctx.services.nativePrices.nativePrice(req.params.token.toLowerCase() as Address);
      if (price === null) throw new OrderBookHttpError(404, 'NoLiquidity', `no native price for ${req.params.token.toLowerCase()}`);
      return sendJson(reply, 200, { price });
    },
  );
}
