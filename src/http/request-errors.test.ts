/**
 * Refusals the server answers before a route's handler (http/request-errors.ts): in the route's API envelope,
 * with a documented status, over a real port.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { pino } from 'pino';
import { Type } from '@sinclair/typebox';
import { buildHttpServer, type HttpServer } from './server.js';

describe('server-side refusals', () => {
  let server: HttpServer;
  let base: string;
  before(async () => {
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 } as never, readiness: [], version: 'test' });
    const p = { params: Type.Object({ id: Type.String({ maxLength: 10 }) }) };
    server.get('/api/v1/things/:id', { schema: { ...p, response: { 200: Type.Object({ id: Type.String() }) } } }, async (req) => ({ id: (req.params as { id: string }).id }));
    server.get('/:chainId/things/:id', { schema: { ...p, response: { 200: Type.Object({ id: Type.String() }) } }, config: { api: 'aux' } }, async (req) => ({ id: (req.params as { id: string }).id }));
    server.post('/things', { schema: { body: Type.Object({ n: Type.Integer() }), response: { 200: Type.Object({ n: Type.Integer() }) } }, config: { api: 'aux' } }, async (req) => req.body);
    server.get('/list', { schema: { querystring: Type.Object({ offset: Type.Optional(Type.Integer({ minimum: 0 })) }), response: { 200: Type.Object({ offset: Type.Number() }) } }, config: { api: 'aux' } }, async (req) => ({ offset: (req.query as { offset?: number }).offset ?? 0 }));
    base = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await server?.close();
  });

  async function get(path: string, init?: RequestInit) {
    const res = await fetch(base + path, init);
    return { status: res.status, body: (await res.json()) as any };
  }

  it('a path segment over the router limit is a 400 InvalidParameter in the API envelope', async () => {
    const long = 'a'.repeat(600);
    assert.deepEqual(await get(`/api/v1/things/${long}`), { status: 400, body: { errorType: 'InvalidParameter', description: 'params: a path parameter is longer than allowed' } });
    assert.deepEqual(await get(`/31337/things/${long}`), { status: 400, body: { message: 'params: a path parameter is longer than allowed' } });
  });

  it('broken percent-encoding in a path segment is a 400 in the API envelope', async () => {
    const res = await get('/api/v1/things/%E0%A4%A');
    assert.equal(res.status, 400);
    assert.equal(res.body.errorType, 'InvalidParameter');
  });

  it('Infinity, 1e300 and integers beyond 2^53 in a query are refused, not coerced', async () => {
    for (const bad of ['Infinity', '1e300', '9007199254740993']) {
      const res = await get(`/list?offset=${bad}`);
      assert.equal(res.status, 400, bad);
      assert.match(res.body.message, /querystring\.offset: must be a finite number/);
    }
    assert.deepEqual(await get('/list?offset=9007199254740991'), { status: 200, body: { offset: 9007199254740991 } });
  });

  it('headers over 16 KiB get a 431 that carries both envelopes (the API is not known yet)', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1', () => socket.write(`GET /api/v1/things/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 431 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(body.errorType, 'RequestHeaderFieldsTooLarge');
    assert.equal(typeof body.message, 'string');
  });

  it('documents 400 on routes that validate, and 413 / 415 on routes that take a body', async () => {
    const doc = (await get('/docs/json')).body;
    assert.deepEqual(Object.keys(doc.paths['/api/v1/things/{id}'].get.responses).sort(), ['200', '400']);
    assert.deepEqual(doc.paths['/api/v1/things/{id}'].get.responses['400'].content['application/json'].schema.required, ['errorType', 'description']);
    assert.deepEqual(Object.keys(doc.paths['/things'].post.responses).sort(), ['200', '400', '413', '415']);
    assert.deepEqual(doc.paths['/things'].post.responses['415'].content['application/json'].schema.required, ['message']);
    const refused = await get('/things', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' });
    assert.deepEqual(refused, { status: 415, body: { message: 'Content-Type must be application/json' } });
  });
});
