/**
 * HTTP side of the metrics: every response's duration by method, route template and status (a request that
 * matched no route is `unmatched`, so raw paths and UIDs never become label values), order submissions by
 * result and errorType (routes that set `config.orderIntake`), and `GET /metrics` in the Prometheus text format.
 *
 * Called on the root server before any route is registered, so its hooks see every route.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../metrics/metrics.js';
import type { HttpServer } from './http-server.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** count this route's answers as order submissions (orders_total by result and errorType) */
    orderIntake?: boolean;
  }
}

/** The errorType of an order-book error body, or a placeholder when the body is not one. */
function errorTypeOf(payload: unknown): string {
  if (typeof payload !== 'string') return 'Unknown';
  try {
    const body = JSON.parse(payload) as { errorType?: unknown };
    return typeof body.errorType === 'string' && /^[A-Za-z]{1,64}$/.test(body.errorType) ? body.errorType : 'Unknown';
  } catch {
    return 'Unknown';
  }
}

function isOrderIntake(request: FastifyRequest): boolean {
  return (request.routeOptions?.config as { orderIntake?: boolean } | undefined)?.orderIntake === true;
}

export function registerMetricsRoutes(server: HttpServer, metrics: Metrics): void {
  const rejectedAs = new WeakMap<FastifyRequest, string>();

  server.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode >= 400 && isOrderIntake(request)) rejectedAs.set(request, errorTypeOf(payload));
    return payload;
  });

  server.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.http.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (!isOrderIntake(request)) return;
    if (reply.statusCode < 400) metrics.orders.created();
    else metrics.orders.rejected(rejectedAs.get(request) ?? 'Unknown');
  });

  server.get(
    '/metrics',
    {
      schema: {
        tags: ['ops'],
        summary: 'Prometheus metrics (text exposition format 0.0.4)',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text format' }) },
      },
      config: { api: 'aux', rateLimit: false },
    },
    async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.code(200).type(metrics.registry.contentType).send(text);
    },
  );
}
