/** The type of the Fastify server every route is registered on (built by http/server.ts). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';

export type HttpServer = FastifyInstance<any, any, any, Logger, TypeBoxTypeProvider>;
