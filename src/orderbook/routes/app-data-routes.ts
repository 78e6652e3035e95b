/** PUT /api/v1/app_data/{hash}, PUT /api/v1/app_data, GET /api/v1/app_data/{hash} (reference orderbook.md §3.10). */
import { Type } from '@sinclair/typebox';
import type { Hex } from 'viem';
import type { HttpServer } from '../../http/server.js';
import { sendJson, MAX_BODY_LIMIT } from '../../http/server.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { Hex32, errorResponses } from '../schemas.js';
import type { OrderBookRouteContext } from './context.js';

const PutBody = Type.Object({ fullAppData: Type.String({ description: 'the app-data JSON document, as a string; hashed over its exact UTF-8 bytes' }) });
const HashParams = Type.Object({ hash: Hex32 });

export function registerAppDataRoutes(server: HttpServer, ctx: OrderBookRouteContext): void {
  const { appData } = ctx.services;
  const common = { tags: ['orderbook'] };

  server.put(
    '/api/v1/app_data/:hash',
    {
      schema: { ...common, summary: 'Upload an app-data document under its hash', params: HashParams, body: PutBody, response: { 200: Hex32, 201: Hex32, ...errorResponses(400, 413) } },
      bodyLimit: MAX_BODY_LIMIT,
      config: { api: 'orderbook' },
    },
    async (req, reply) => {
      const { hash, created } = await appData.put(req.body.fullAppData, req.params.hash as Hex);
      return sendJson(reply, created ? 201 : 200, hash);
    },
  );

  server.put(
    '/api/v1/app_data',
    {
      schema: { ...common, summary: 'Upload an app-data document; the server computes its hash', body: PutBody, response: { 200: Hex32, 201: Hex32, ...errorResponses(400, 413) } },
      bodyLimit: MAX_BODY_LIMIT,
      config: { api: 'orderbook' },
    },
    async (req, reply) => {
      const { hash, created } = await appData.put(req.body.fullAppData, null);
      return sendJson(reply, created ? 201 : 200, hash);
    },
  );

  server.get(
    '/api/v1/app_data/:hash',
    {
      schema: { ...common, summary: 'The app-data document of a hash', params: HashParams, response: { 200: Type.Object({ fullAppData: Type.String() }), ...errorResponses(400, 404) } },
      config: { api: 'orderbook' },
    },
    async (req, reply) => {
      const doc = await appData.get(req.params.hash as Hex);
      if (doc === null) throw new OrderBookError('NotFound', 'full app data not found');
      return sendJson(reply, 200, { fullAppData: doc });
    },
  );
}
