/**
 * The engine-side routes on a real HTTP server: malformed bodies are 400 `{message}`, an engine past its
 * concurrency answers 429 while it still serves the auction it has, notifications are checked and kept.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { AddressInfo } from 'node:net';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { call } from '../../test/fixtures/orders.js';
import { waitFor } from '../../test/fixtures/wait-for.js';
import { encodeAuction } from './codec.js';
import { EngineService, InternalSolverEngine } from './engines.js';
import { registerSolverEngineRoutes } from './routes.js';
import { testAuction, testOrder } from '../../test/fixtures/solver-auctions.js';
import type { Solution, Solver } from '../solver/solution.js';

describe('solver engine routes', () => {
  let server: HttpServer;
  let base: string;
  let release: () => void = () => {};
  let started = 0;
  // an engine that holds each auction until the test releases it
  const held: Solver = {
    name: 'held',
    async solve(): Promise<Solution[]> {
      started++;
      await new Promise<void>((resolve) => (release = resolve));
      return [];
    },
  };
  const network = { chainId: 31337, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as const };
  const service = new EngineService(new InternalSolverEngine(held, network), 1);

  before(async () => {
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    registerSolverEngineRoutes(server, { engines: new Map([['held', service]]), prefix: '/devnet' });
    await server.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    release();
    await server?.close();
  });

  it('answers 400 with the field for malformed bodies, 404 for unknown engines', async () => {
    const good = encodeAuction(testAuction([testOrder()])) as Record<string, unknown>;
    const bad = await call(base, 'POST', '/devnet/solvers/held/solve', { ...good, orders: [{ ...(good.orders as object[])[0], buyAmount: '12abc' }] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /orders\.0\.buyAmount/);
    const json = await call(base, 'POST', '/devnet/solvers/held/solve', '{"orders": [');
    assert.equal(json.status, 400);
    assert.ok(typeof json.body.message === 'string');
    const { tokens: _t, ...missing } = good;
    assert.equal((await call(base, 'POST', '/devnet/solvers/held/solve', missing)).status, 400);
    assert.equal((await call(base, 'POST', '/devnet/solvers/other/solve', good)).status, 404);
    assert.equal((await call(base, 'POST', '/devnet/solvers/held/notify', { kind: 'nope' })).status, 400);
    assert.equal((await call(base, 'POST', '/devnet/solvers/held/notify', { auctionId: '1', solutionId: 0, kind: 'revert' })).status, 200);
    assert.deepEqual(service.notifications.at(-1), { auctionId: '1', solutionId: 0, kind: 'revert' });
  });

  it('answers 429 when the engine is busy beyond its concurrency, and the busy one still completes', async () => {
    const auction = encodeAuction(testAuction([testOrder()]));
    const first = call(base, 'POST', '/devnet/solvers/held/solve', auction);
    await waitFor('the engine busy with the first auction', () => started === 1);
    const second = await call(base, 'POST', '/devnet/solvers/held/solve', auction);
    assert.equal(second.status, 429);
    assert.match(second.body.message, /too many/);
    release();
    const answered = await first;
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.body, { solutions: [] });
  });
});
