/**
 * GET /hooks?blockchain=&period=&limit=&offset=&maxWaitTimeMs= (spec §4.7): hooks executed in settlements.
 * 200 `{hooks, count}` with `Cache-Control: public, max-age=300`; a bad parameter → 400 and a failure → 500,
 * both `{hooks: [], count: 0, error}` with `Cache-Control: no-store` (the route's own envelope: schema errors are
 * answered here, not by the global `{message}` handler).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { HttpServer } from '../../http/server.js';
import { sendJson } from '../../http/server.js';
import { HOOK_PERIODS, HooksQueryError, type HooksService } from './hooks-service.js';

export interface HooksRoutesContext {
  service: HooksService;
  logger?: { error(obj: object, msg?: string): void };
}

export const MAX_HOOKS_LIMIT = 1000;
const CACHE_SECONDS = 300;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const HookRowSchema = Type.Object({
  environment: Type.String({ description: "the order book's environment ('prod' for our own rows)" }),
  block_time: Type.String({ description: 'time of the block, ISO 8601 UTC' }),
  is_bridging: Type.Boolean(),
  success: Type.Boolean({ description: 'false when the hook reverted or ran out of gas (the settlement went through)' }),
  app_code: Nullable(Type.String()),
  destination_chain_id: Nullable(Type.String()),
  destination_token_address: Nullable(Type.String()),
  hook_type: Type.Union([Type.Literal('pre'), Type.Literal('post')]),
  app_id: Nullable(Type.String({ description: "the hook's dappId" })),
  target: Type.String(),
  gas_limit: Type.Number(),
  app_hash: Nullable(Type.String()),
  tx_hash: Type.String(),
});

const HooksResponse = Type.Object({ hooks: Type.Array(HookRowSchema), count: Type.Integer({ description: 'number of rows in `hooks`' }) });
const HooksError = Type.Object({ hooks: Type.Array(HookRowSchema, { maxItems: 0 }), count: Type.Literal(0), error: Type.String() });

function sendFailure(reply: FastifyReply, status: number, error: string): FastifyReply {
  reply.header('cache-control', 'no-store');
  return sendJson(reply, status, { hooks: [], count: 0, error });
}

export function registerHooksRoutes(server: HttpServer, context: HooksRoutesContext): void {
  const Query = Type.Object({
    blockchain: Type.String({ enum: context.service.blockchains(), description: 'a reference network name or a network this node serves' }),
    period: Type.String({ enum: Object.keys(HOOK_PERIODS) }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HOOKS_LIMIT, default: MAX_HOOKS_LIMIT })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    maxWaitTimeMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000, default: 300_000, description: 'how long to wait for an external analytics query (accepted up to 600000 as upstream; the node waits at most 30000)' })),
  });
  server.get(
    '/hooks',
    {
      schema: {
        tags: ['hooks'],
        summary: 'Hooks executed in settlements over a period (first-party for served networks)',
        querystring: Query,
        response: { 200: HooksResponse, 400: HooksError, 500: HooksError },
      },
      attachValidation: true,
      config: { api: 'aux' },
    },
    async (req, reply) => {
      if (req.validationError) return sendFailure(reply, 400, req.validationError.message);
      const q = req.query as { blockchain: string; period: string; limit?: number; offset?: number; maxWaitTimeMs?: number };
      try {
        const hooks = await context.service.list({ blockchain: q.blockchain, period: q.period, limit: q.limit ?? MAX_HOOKS_LIMIT, offset: q.offset ?? 0, maxWaitTimeMs: q.maxWaitTimeMs ?? 300_000 });
        reply.header('cache-control', `public, max-age=${CACHE_SECONDS}`);
        return sendJson(reply, 200, { hooks, count: hooks.length });
      } catch (err) {
        if (err instanceof HooksQueryError) return sendFailure(reply, 400, err.message);
        context.logger?.error({ err }, 'hooks: query failed');
        return sendFailure(reply, 500, 'Internal server error while fetching hooks');
      }
    },
  );
}
