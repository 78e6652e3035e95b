/**
 * The errors the server itself answers before a route's handler runs, in the envelope of the route's API and
 * in the route's documented responses:
 * - 400 when a path parameter, the query or the body fails its schema, a JSON body is malformed, a path
 *   segment is longer than the router accepts or is not valid percent-encoding;
 * - 413 (body over the route's limit) and 415 (not JSON) on every method that takes a body.
 * `documentRequestErrors` adds these to each route's response schemas where the route does not declare them
 * itself, so that the OpenAPI document lists every status a client can receive.
 */
import type { FastifyError, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Socket } from 'node:net';

export type ApiFamily = 'orderbook' | 'aux';

/** `/api/v1/...` and `/{network}/api/v1/...` are the order book's. */
export const ORDERBOOK_PATH = /^\/(?:[a-z_]+\/)?api\/v\d+(?:\/|$)/;

const ORDERBOOK_ERROR = {
  type: 'object',
  required: ['errorType', 'description'],
  properties: { errorType: { type: 'string' }, description: { type: 'string' }, data: {} },
  additionalProperties: true,
};
const AUX_ERROR = { type: 'object', required: ['message'], properties: { message: { type: 'string' } }, additionalProperties: true };

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** the API a route belongs to: its `config.api`, else its path */
export function familyOfRoute(url: string, config: unknown): ApiFamily {
  const configured = (config as { api?: ApiFamily } | undefined)?.api;
  if (configured) return configured;
  return ORDERBOOK_PATH.test(url) ? 'orderbook' : 'aux';
}

/** onRoute hook: documents 400 / 413 / 415 on routes that can answer them and do not document them yet. */
export function documentRequestErrors(route: RouteOptions): void {
  const schema = route.schema as (Record<string, unknown> & { response?: Record<string, unknown>; hide?: boolean }) | undefined;
  if (!schema || schema.hide) return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const takesBody = methods.some((m) => BODY_METHODS.has(m));
  const validates = takesBody || route.url.includes(':') || !!schema.params || !!schema.querystring || !!schema.body || !!schema.headers;
  const statuses = [...(validates ? [400] : []), ...(takesBody ? [413, 415] : [])];
  if (!statuses.length) return;
  const envelope = familyOfRoute(route.url, route.config) === 'orderbook' ? ORDERBOOK_ERROR : AUX_ERROR;
  const response = (schema.response ??= {});
  for (const status of statuses) {
    if (response[status] === undefined && response[String(status)] === undefined) response[status] = { ...envelope, description: REASONS[status] };
  }
}

const REASONS: Record<number, string> = {
  400: 'Invalid request: a parameter, the query or the body does not match its schema, or the JSON is malformed',
  413: 'The request body is larger than this route accepts',
  415: 'The request body is not application/json',
};

/**
 * Fastify's `frameworkErrors`: a path segment longer than the router's limit or with broken percent-encoding
 * is an invalid parameter (400 in the API's envelope), not a bare framework error.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = (request.raw.url ?? '').split('?')[0] ?? '';
  const description =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'params: a path parameter is longer than allowed' :
    error.code === 'FST_ERR_BAD_URL' ? 'params: a path parameter is not valid percent-encoding' : `request: ${error.message}`;
  const body = ORDERBOOK_PATH.test(path) ? { errorType: 'InvalidParameter', description } : { message: description };
  return reply.code(400).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * Node's HTTP parser refuses a request before any route is known (headers or URL over 16 KiB, a malformed
 * request line, a client too slow): the answer carries both envelopes' fields, since its API is unknown.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, errorType, description] =
    error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large', 'RequestHeaderFieldsTooLarge', 'the request line and headers exceed 16 KiB'] :
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request Timeout', 'RequestTimeout', 'the request was not received in time'] :
    [400, 'Bad Request', 'InvalidParameter', 'malformed HTTP request'];
  const body = JSON.stringify({ errorType, description, message: description });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
