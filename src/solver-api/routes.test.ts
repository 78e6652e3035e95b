/**
 * The engine-side routes on a real HTTP server (issue 19): only a caller with `Authorization: Bearer <token>` is
 * served, and one without is refused before its body is read; bodies over 8 MiB are 413; auctions over 5 000
 * orders, 10 000 tokens or 5 000 liquidity entries are 400 (those numbers exactly are still solved); zero signed
 * amounts are 400; malformed bodies are 400 `{message}`; an engine past its concurrency answers 429 while it
 * still serves the auction it has; the built-ins solve on a worker thread, so `/healthz` answers while a large
 * auction is being solved, and an auction past its deadline is answered at once with no solution.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { pino } from 'pino';
import type { AddressInfo } from 'node:net';
import type { Address } from 'viem';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { call } from '../../test/fixtures/orders.js';
import { waitFor } from '../../test/fixtures/wait-for.js';
import { encodeAuction } from './codec.js';
import { EngineService, InternalSolverEngine } from './engines.js';
import { ThreadedEngine } from './engine-threads.js';
import { registerSolverEngineRoutes, SOLVE_BODY_LIMIT } from './routes.js';
import { auctionOf, testAuction, testOrder } from '../../test/fixtures/solver-auctions.js';
import type { Solution, Solver } from '../solver/solution.js';

const TOKEN = 'test-engine-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
type Wire = Record<string, unknown> & { orders: Array<Record<string, unknown>>; tokens: Record<string, unknown>; liquidity: unknown[]; deadline: string };

describe('solver engine routes', () => {
  let server: HttpServer;
  let base: string;
  let release: () => void = () => {};
  let started = 0;
  let solved = 0;
  // an engine that holds each auction until the test releases it
  const held: Solver = {
    name: 'held',
    async solve(): Promise<Solution[]> {
      started++;
      await new Promise<void>((resolve) => (release = resolve));
      return [];
    },
  };
  // an engine that finds nothing, at once
  const quick: Solver = {
    name: 'quick',
    async solve(): Promise<Solution[]> {
      solved++;
      return [];
    },
  };
  const network = { chainId: 31337, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as const };
  const service = new EngineService(new InternalSolverEngine(held, network), 1);
  const threaded = new EngineService(new ThreadedEngine('cow-matcher', { ...network, amm: null, connectors: [], wrappedNative: null }));
  const good = () => encodeAuction(testAuction([testOrder()])) as unknown as Wire;

  before(async () => {
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    const engines = new Map([
      ['held', service],
      ['quick', new EngineService(new InternalSolverEngine(quick, network))],
      ['cow-matcher', threaded],
    ]);
    registerSolverEngineRoutes(server, { engines, prefix: '/devnet', token: TOKEN });
    await server.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    release();
    await threaded.close();
    await server?.close();
  });

  it('refuses callers without the bearer token with 401 {message}, before reading the body', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN} x` }]) {
      const res = await call(base, 'POST', '/devnet/solvers/quick/solve', good(), headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(res.body.message, /Bearer/);
      assert.equal((await call(base, 'POST', '/devnet/solvers/quick/notify', { kind: 'timeout' }, headers)).status, 401);
    }
    assert.equal(solved, 0, 'no refused request reached the engine');
    // a body that never ends: the refusal comes anyway (the body is never waited for)
    const req = httpRequest(`${base}/devnet/solvers/quick/solve`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(SOLVE_BODY_LIMIT), authorization: 'Bearer wrong-token-0123456789' } });
    req.on('error', () => {});
    req.write('{"orders": [');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const chunk of res) text += String(chunk);
    req.destroy();
    assert.equal(res.statusCode, 401);
    assert.match(JSON.parse(text).message, /Bearer/);
  });

  it('answers 413 over 8 MiB, 400 over 5 000 orders, 10 000 tokens or 5 000 liquidity entries, and solves exactly those', async () => {
    const big = await call(base, 'POST', '/devnet/solvers/quick/solve', `{"pad":"${'x'.repeat(SOLVE_BODY_LIMIT)}"}`, auth);
    assert.equal(big.status, 413);
    assert.match(big.body.message, /exceeds/);

    const auction = good();
    const [order] = auction.orders;
    const [pool] = auction.liquidity;
    const orders = (n: number) => Array.from({ length: n }, (_, i) => ({ ...order, uid: `0x${(i + 1).toString(16).padStart(112, '0')}` }));
    const tokens = (n: number) => ({ ...auction.tokens, ...Object.fromEntries(Array.from({ length: n - 2 }, (_, i) => [`0x${(0xc0000 + i).toString(16).padStart(40, '0')}`, { availableBalance: '0', trusted: false }])) });
    const liquidity = (n: number) => Array.from({ length: n }, (_, i) => ({ ...(pool as object), id: String(i) }));
    for (const [field, over] of [
      ['orders', { orders: orders(5_001) }],
      ['tokens', { tokens: tokens(10_001) }],
      ['liquidity', { liquidity: liquidity(5_001) }],
    ] as const) {
      const res = await call(base, 'POST', '/devnet/solvers/quick/solve', { ...auction, ...over }, auth);
      assert.equal(res.status, 400, field);
      assert.match(res.body.message, new RegExp(`auction\\.${field}: \\d+ entries, at most`));
    }
    assert.equal(solved, 0, 'refused before the engine');
    const atLimits = await call(base, 'POST', '/devnet/solvers/quick/solve', { ...auction, orders: orders(5_000), tokens: tokens(10_000), liquidity: liquidity(5_000) }, auth);
    assert.equal(atLimits.status, 200, JSON.stringify(atLimits.body).slice(0, 300));
    assert.deepEqual(atLimits.body, { solutions: [] });
    assert.equal(solved, 1);
  });

  it('answers 400 for zero signed amounts and malformed bodies, 404 for unknown engines', async () => {
    const auction = good();
    const [order] = auction.orders;
    for (const [zero, field] of [
      [{ fullSellAmount: '0' }, 'fullSellAmount'],
      [{ fullBuyAmount: '0' }, 'fullBuyAmount'],
      [{ buyAmount: '0', fullBuyAmount: '0' }, 'fullBuyAmount'],
    ] as const) {
      for (const engine of ['quick', 'cow-matcher']) {
        const res = await call(base, 'POST', `/devnet/solvers/${engine}/solve`, { ...auction, orders: [{ ...order, ...zero }] }, auth);
        assert.equal(res.status, 400, `${engine} ${JSON.stringify(zero)}`);
        assert.match(res.body.message, new RegExp(`orders\\.0\\.${field}: the signed \\w+ amount must be positive`));
      }
    }
    const bad = await call(base, 'POST', '/devnet/solvers/cow-matcher/solve', { ...auction, orders: [{ ...order, buyAmount: '12abc' }] }, auth);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /orders\.0\.buyAmount/);
    const json = await call(base, 'POST', '/devnet/solvers/cow-matcher/solve', '{"orders": [', auth);
    assert.equal(json.status, 400);
    assert.match(json.body.message, /malformed JSON/);
    const { tokens: _t, ...missing } = auction;
    assert.equal((await call(base, 'POST', '/devnet/solvers/quick/solve', missing, auth)).status, 400);
    assert.equal((await call(base, 'POST', '/devnet/solvers/other/solve', auction, auth)).status, 404);
    assert.equal((await call(base, 'POST', '/devnet/solvers/held/notify', { kind: 'nope' }, auth)).status, 400);
    assert.equal((await call(base, 'POST', '/devnet/solvers/held/notify', { auctionId: '1', solutionId: 0, kind: 'revert' }, auth)).status, 200);
    assert.deepEqual(service.notifications.at(-1), { auctionId: '1', solutionId: 0, kind: 'revert' });
  });

  it('lets one client send 64 requests at once (the rate limit allows more than 4 a second and 60 a minute)', async () => {
    const answers = await Promise.all(Array.from({ length: 64 }, () => call(base, 'POST', '/devnet/solvers/quick/notify', { kind: 'timeout' }, auth)));
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
  });

  it('answers 429 when the engine is busy beyond its concurrency, and the busy one still completes', async () => {
    const auction = good();
    const first = call(base, 'POST', '/devnet/solvers/held/solve', auction, auth);
    await waitFor('the engine busy with the first auction', () => started === 1);
    const second = await call(base, 'POST', '/devnet/solvers/held/solve', auction, auth);
    assert.equal(second.status, 429);
    assert.match(second.body.message, /too many/);
    release();
    const answered = await first;
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.body, { solutions: [] });
  });

  it('solves on a worker thread: /healthz answers while a large auction is solved; a past deadline gets no solution', async () => {
    const wire = encodeAuction(auctionOf(2_000, 100)) as unknown as Wire;
    const inTime = { ...wire, deadline: new Date(Date.now() + 30_000).toISOString() };
    let answered = false;
    const solving = call(base, 'POST', '/devnet/solvers/cow-matcher/solve', inTime, auth).finally(() => (answered = true));
    // healthz answers while the auction is still being solved (on the event loop, it would wait for the answer)
    const health = await waitFor('/healthz answered while the solve runs', async () => {
      const res = await call(base, 'GET', '/healthz');
      return res.status === 200 ? { res, answered } : null;
    });
    assert.equal(health.answered, false, 'the health check came back before the solve did');
    const res = await solving;
    assert.equal(res.status, 200);
    assert.ok((res.body.solutions as unknown[]).length > 0, 'the large auction is solved');

    const late = await call(base, 'POST', '/devnet/solvers/cow-matcher/solve', { ...wire, deadline: new Date(Date.now() - 1_000).toISOString() }, auth);
    assert.equal(late.status, 200);
    assert.deepEqual(late.body, { solutions: [] }, 'past its deadline, an auction is answered with no solution');
  });

  it('ends a worker that has not answered by its stop time and answers no solution', async () => {
    const engine = new ThreadedEngine('cow-matcher', { ...network, amm: null, connectors: [], wrappedNative: null as Address | null }, { maxSolveMs: 0 });
    try {
      assert.equal(await engine.solveBody(JSON.stringify(encodeAuction(testAuction([testOrder()]))), null), '{"solutions":[]}');
      assert.equal(engine.threads, 0, 'the thread was ended, not kept');
    } finally {
      await engine.close();
    }
  });
});
