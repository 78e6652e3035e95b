/**
 * The engine side over HTTP: `POST {prefix}/solvers/{name}/solve` with an `Auction` → `{solutions}`, and
 * `POST {prefix}/solvers/{name}/notify`, for each engine given (our built-in ones), so that they run behind our
 * driver and behind any other driver of the Solver Engine API. Served only to holders of the operator's token
 * (`SOLVER_ENGINE_TOKEN`; without one the node registers no such route): `Authorization: Bearer <token>`, checked
 * before the body is read (401 `{message}` otherwise). A body over 8 MiB is 413; an auction of more than 5 000
 * orders, 10 000 tokens or 5 000 liquidity entries, or a malformed one (bad JSON, a missing field, an amount like
 * "12abc", a zero signed amount) is 400 `{message}`; an engine past its concurrency is 429; an unknown engine 404.
 * The body reaches the engine as text: parsing, decoding and solving happen on the engine's worker thread.
 * The contract of these routes is the upstream Solver Engine API document, not our /docs (they are hidden there).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { HttpServer } from '../http/server.js';
import { CodecError } from './codec.js';
import { AUCTION_LIMITS, EngineBusyError, type EngineService } from './engines.js';

/** The largest `/solve` body: an auction at the limits is well within it. */
export const SOLVE_BODY_LIMIT = 8 * 1024 * 1024;
/** Requests per minute per client on these routes (a driver sends one auction a block and its notifications; bursts welcome). */
export const SOLVE_RATE_LIMIT_PER_MINUTE = 600;

export interface SolverEngineRoutes {
  engines: ReadonlyMap<string, EngineService>;
  /** e.g. `/devnet`; '' for the root */
  prefix?: string;
  /** the bearer token callers must present (SOLVER_ENGINE_TOKEN) */
  token: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Whether `Authorization` carries exactly `Bearer <token>` (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer ([^\s]+)$/.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), digest(token));
}

export function registerSolverEngineRoutes(server: HttpServer, options: SolverEngineRoutes): void {
  if (!options.token) throw new Error('registerSolverEngineRoutes: a token is required');
  void server.register(async (scope: FastifyInstance) => solverEngineRoutes(scope, options));
}

async function solverEngineRoutes(scope: FastifyInstance, options: SolverEngineRoutes): Promise<void> {
  const prefix = options.prefix ?? '';
  const params = Type.Object({ name: Type.String() });
  // the body stays text: the engine's thread parses it (a bad one is 400 from the codec)
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const authorize = async (request: FastifyRequest, reply: FastifyReply) => {
    if (bearerMatches(request.headers.authorization, options.token)) return;
    await reply.code(401).header('www-authenticate', 'Bearer').send({ message: 'solver engine routes need Authorization: Bearer <SOLVER_ENGINE_TOKEN>' });
    return reply;
  };
  const find = (name: string, reply: FastifyReply): EngineService | null => {
    const engine = options.engines.get(name);
    if (!engine) void reply.code(404).send({ message: `no solver engine '${name}' (known: ${[...options.engines.keys()].join(', ')})` });
    return engine ?? null;
  };
  const route = { onRequest: authorize, config: { api: 'aux', rateLimit: { max: SOLVE_RATE_LIMIT_PER_MINUTE, timeWindow: 60_000 } } } as const;

  scope.post(`${prefix}/solvers/:name/solve`, { ...route, bodyLimit: SOLVE_BODY_LIMIT, schema: { hide: true, params } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const engine = find(name, reply);
    if (!engine) return reply;
    try {
      const text = await engine.solve(request.body, AUCTION_LIMITS);
      return reply.code(200).type('application/json; charset=utf-8').send(text);
    } catch (err) {
      if (err instanceof CodecError) return reply.code(400).send({ message: err.message });
      if (err instanceof EngineBusyError) return reply.code(429).send({ message: err.message });
      throw err;
    }
  });

  scope.post(`${prefix}/solvers/:name/notify`, { ...route, bodyLimit: 64 * 1024, schema: { hide: true, params } }, async (request, reply) => {
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
