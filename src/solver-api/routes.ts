/**
 * The engine side over HTTP: `POST {prefix}/solvers/{name}/solve` with an `Auction` → `{solutions}`, and
 * `POST {prefix}/solvers/{name}/notify`, for each engine given (our built-in ones), so that they run behind our
 * driver and behind any other driver of the Solver Engine API. A malformed body (bad JSON, a missing field,
 * an amount like "12abc") is 400 `{message}`; an engine past its concurrency is 429; an unknown engine 404.
 * The contract of these routes is the upstream Solver Engine API document, not our /docs (they are hidden there).
 */
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { HttpServer } from '../http/server.js';
import { CodecError } from './codec.js';
import { EngineBusyError, type EngineService } from './engines.js';

/** Auctions of many thousand orders are megabytes of JSON. */
export const SOLVE_BODY_LIMIT = 64 * 1024 * 1024;

export interface SolverEngineRoutes {
  engines: ReadonlyMap<string, EngineService>;
  /** e.g. `/devnet`; '' for the root */
  prefix?: string;
}

export function registerSolverEngineRoutes(server: HttpServer, options: SolverEngineRoutes): void {
  const prefix = options.prefix ?? '';
  const params = Type.Object({ name: Type.String() });
  const find = (name: string, reply: FastifyReply): EngineService | null => {
    const engine = options.engines.get(name);
    if (!engine) void reply.code(404).send({ message: `no solver engine '${name}' (known: ${[...options.engines.keys()].join(', ')})` });
    return engine ?? null;
  };
  const route = { bodyLimit: SOLVE_BODY_LIMIT, config: { api: 'aux', rateLimit: false } } as const;

  server.post(`${prefix}/solvers/:name/solve`, { ...route, schema: { hide: true, params } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const engine = find(name, reply);
    if (!engine) return reply;
    try {
      return reply.code(200).send(await engine.solve(request.body));
    } catch (err) {
      if (err instanceof CodecError) return reply.code(400).send({ message: err.message });
      if (err instanceof EngineBusyError) return reply.code(429).send({ message: err.message });
      throw err;
    }
  });

  server.post(`${prefix}/solvers/:name/notify`, { ...route, bodyLimit: 1024 * 1024, schema: { hide: true, params } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const engine = find(name, reply);
    if (!engine) return reply;
    try {
      const n = engine.notify(request.body);
      request.log.debug({ engine: name, notification: n }, 'solver engine: notified');
      return reply.code(200).send({});
    } catch (err) {
      if (err instanceof CodecError) return reply.code(400).send({ message: err.message });
      throw err;
    }
  });
}
