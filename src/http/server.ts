/**
 * The Fastify server every route lives on: schema-first validation (http/validation.ts), one error handler
 * producing the envelope of the API a route belongs to, body caps, CORS, per-client rate limits (in Redis when
 * configured, so replicas share one budget), OpenAPI at /docs, and /healthz + /readyz.
 */
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { AuxError, OrderBookHttpError, orderBookErrorStatus, type ApiFamily } from './errors.js';
import { OrderBookError } from '../protocol/order-book-error.js';
import { buildValidatorCompiler, describeValidationError, lazyResponseSerializers } from './validation.js';
import { redactUrlSecrets } from '../infra/secret-redaction.js';
import { clientKeyOf, fastifyTrustProxy, type TrustProxy } from './client-identity.js';
import type { RateLimitConfig } from '../config/config.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerMetricsRoutes } from './metrics-routes.js';
import type { HttpServer } from './http-server.js';
import { databaseUnavailableIn } from '../db/unavailable.js';
import { answerClientError, answerFrameworkError, documentRequestErrors } from './request-errors.js';

export type { HttpServer } from './http-server.js';

/** Order-book routes accept at most 16 KiB of JSON (reference orderbook.md §2). */
export const ORDERBOOK_BODY_LIMIT = 16 * 1024;
/** Largest body any route accepts (auxiliary routes with long address lists set their own, up to this). */
export const MAX_BODY_LIMIT = 64 * 1024;

export interface ReadinessCheck {
  name: string;
  check: () => Promise<boolean>;
}

export interface HttpServerOptions {
  logger: Logger;
  rateLimit: RateLimitConfig;
  redis?: Redis | null;
  redisKeyPrefix?: string;
  readiness: ReadinessCheck[];
  /** each network's indexing position, shown by /readyz under `indexed` (chain/network.ts `indexingSummary`) */
  indexing?: () => Record<string, object>;
  version: string;
  /** proxies whose X-Forwarded-For is believed (TRUST_PROXY); default: none */
  trustProxy?: TrustProxy;
  /** record HTTP metrics and serve GET /metrics */
  metrics?: Metrics;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** which error envelope the route answers with */
    api?: ApiFamily;
  }
}

const ORDERBOOK_PATH = /^\/(?:[a-z_]+\/)?api\/v\d+(?:\/|$)/;

function familyOf(request: FastifyRequest): ApiFamily {
  const configured = (request.routeOptions?.config as { api?: ApiFamily } | undefined)?.api;
  if (configured) return configured;
  return ORDERBOOK_PATH.test(request.url.split('?')[0] ?? '') ? 'orderbook' : 'aux';
}

/** Sends a JSON value (including a bare JSON string, which Fastify would otherwise send as text/plain). */
export function sendJson(reply: FastifyReply, status: number, value: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(value));
}

function reply4xx(request: FastifyRequest, reply: FastifyReply, status: number, errorType: string, description: string, data?: unknown) {
  const safe = redactUrlSecrets(description);
  if (familyOf(request) === 'orderbook') {
    return sendJson(reply, status, data === undefined ? { errorType, description: safe } : { errorType, description: safe, data });
  }
  return sendJson(reply, status, { message: safe });
}

/** Fastify's request logging as one line per finished request at `debug` (errors still at `error`). */
class RequestLogAtDebug extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.debug(line, 'request');
  }
}

export async function buildHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const server = Fastify({
    loggerInstance: options.logger,
    bodyLimit: MAX_BODY_LIMIT,
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
    return503OnClosing: true,
    // one line per request, at debug: the terminal of `npm start` stays readable at info
    logController: new RequestLogAtDebug(),
    forceCloseConnections: 'idle',
    ajv: undefined,
    // response serializers built by their first response, not all at start (validation.ts)
    schemaController: { compilersFactory: { buildSerializer: lazyResponseSerializers() as never } },
    // order UIDs are 114 characters; the default 100 would answer 414
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    // refusals before any route runs, in the API's envelope (http/request-errors.ts)
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as HttpServer;

  server.setValidatorCompiler(buildValidatorCompiler());
  server.addHook('onRoute', documentRequestErrors);

  server.setErrorHandler((error: FastifyError & { validation?: unknown[]; validationContext?: string }, request, reply) => {
    if (error instanceof OrderBookError) {
      return reply4xx(request, reply, orderBookErrorStatus(error.errorType), error.errorType, error.description, error.data);
    }
    if (error instanceof OrderBookHttpError) {
      return reply4xx(request, reply, error.status, error.errorType, error.description);
    }
    if (error instanceof AuxError) {
      if (error.status >= 500) request.log.error({ err: error }, 'aux error');
      return sendJson(reply, error.status, { message: redactUrlSecrets(error.message) });
    }
    if (error.validation) {
      const { description } = describeValidationError(error.validationContext, error.validation as never[]);
      return reply4xx(request, reply, 400, 'InvalidParameter', description);
    }
    const status = error.statusCode ?? 500;
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply4xx(request, reply, 413, 'PayloadTooLarge', `request body exceeds ${reply.request.routeOptions.bodyLimit ?? MAX_BODY_LIMIT} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply4xx(request, reply, 415, 'UnsupportedMediaType', 'Content-Type must be application/json');
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply4xx(request, reply, 400, 'InvalidParameter', 'body: a JSON body is required');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply4xx(request, reply, 400, 'InvalidParameter', `body: malformed JSON (${error.message})`);
    }
    if (status === 429) {
      const retryAfter = reply.getHeader('retry-after');
      return reply4xx(request, reply, 429, 'RateLimited', `too many requests${retryAfter ? `, retry after ${retryAfter} s` : ''}`);
    }
    if (status >= 400 && status < 500) {
      // Fastify/Node parse failures (e.g. malformed JSON: SyntaxError with statusCode 400)
      const errorType = status === 400 ? 'InvalidParameter' : status === 404 ? 'NotFound' : 'BadRequest';
      return reply4xx(request, reply, status, errorType, error.message);
    }
    if (databaseUnavailableIn(error)) {
      // PostgreSQL stopped or unreachable: a quick 503 the client may retry, not a 500 that reads as a bug
      request.log.warn({ err: error.message }, 'database unavailable');
      void reply.header('retry-after', '1');
      return reply4xx(request, reply, 503, 'ServiceUnavailable', 'the database is unavailable, retry shortly');
    }
    request.log.error({ err: error }, 'unhandled error');
    if (familyOf(request) === 'orderbook') return sendJson(reply, 500, { errorType: 'InternalServerError', description: '' });
    return sendJson(reply, 500, { message: 'Internal server error' });
  });

  server.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    return reply4xx(request, reply, 404, 'NotFound', `no route ${request.method} ${path}`);
  });

  await server.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'],
    allowedHeaders: ['origin', 'content-type', 'accept', 'x-auth-token', 'x-appid', 'last-event-id'],
  });

  const { other } = options.rateLimit;
  await server.register(rateLimit, {
    // with no general limit (RATE_LIMIT_OTHER=0) only routes that set their own limit pay for the check
    global: other > 0,
    max: other > 0 ? other : 1_000_000_000,
    timeWindow: 1000,
    ...(options.redis ? { redis: options.redis, nameSpace: `${options.redisKeyPrefix ?? 'batchbook:'}ratelimit:` } : {}),
    // the real client (behind trusted proxies), IPv6 by its /64
    keyGenerator: clientKeyOf,
    // Redis down: serve rather than refuse everybody (the limit is a protection, not a correctness rule)
    skipOnError: true,
    errorResponseBuilder: (_req, ctx) => {
      const err = new Error(`too many requests, retry after ${Math.ceil(ctx.ttl / 1000)} s`) as Error & { statusCode: number };
      err.statusCode = ctx.statusCode;
      return err;
    },
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
  });

  await server.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'batchbook',
        version: options.version,
        description:
          'CoW-Protocol-compatible order book (`/{network}/api/v1`, and `/api/v1` for the default network) and auxiliary API (`/{chainId}/...`).',
      },
      tags: [
        { name: 'orderbook', description: 'Order-book API (errors: `{errorType, description}`)' },
        { name: 'auxiliary', description: 'Auxiliary API (errors: `{message}`)' },
        { name: 'devnet', description: 'The embedded development chain' },
        { name: 'ops', description: 'Health and readiness' },
      ],
    },
  });
  await server.register(swaggerUi, { routePrefix: '/docs', staticCSP: false });
  if (options.metrics) registerMetricsRoutes(server, options.metrics);

  server.get('/healthz', { schema: { tags: ['ops'], response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } }, config: { api: 'aux', rateLimit: false } }, async () => ({ status: 'ok' }));
  server.get(
    '/readyz',
    {
      schema: {
        tags: ['ops'],
        response: {
          200: READYZ_SCHEMA,
          503: READYZ_SCHEMA,
        },
      },
      config: { api: 'aux', rateLimit: false },
    },
    async (_req, reply) => {
      const results = await Promise.all(
        options.readiness.map(async (c) => [c.name, await c.check().catch(() => false)] as const),
      );
      const checks = Object.fromEntries(results);
      const ok = results.every(([, v]) => v);
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks, ...(options.indexing ? { indexed: options.indexing() } : {}) });
    },
  );
  return server;
}

const READYZ_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    checks: { type: 'object', additionalProperties: { type: 'boolean' } },
    indexed: {
      type: 'object',
      description: 'what the indexer of each served network follows; top holders of `holderTokens` are served from this index, others from the holder APIs',
      additionalProperties: {
        type: 'object',
        properties: {
          settlement: { type: 'string' },
          holderTokens: { type: 'array', items: { type: 'string' } },
          pools: { type: 'integer' },
          factory: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        },
      },
    },
  },
} as const;

/** Route-level rate limit for a class of endpoint (spec §8: quotes ≈ 10/s, submissions ≈ 5/s). */
export function rateLimitFor(config: RateLimitConfig, kind: keyof RateLimitConfig): { max: number; timeWindow: number } | false {
  const max = config[kind];
  return max > 0 ? { max, timeWindow: 1000 } : false;
}
