/**
 * Solver Engine API figures (issue 12), each against a baseline measured in the same run:
 * (a) encoding an auction of 10 000 orders and 100 constant-product pools to its JSON body (our codec's encode
 *     + serialization, what the driver does once per auction) ÷ a bare `JSON.stringify` of the same wire object;
 * (b) the built-in `cow-matcher` engine answering an auction of 1 000 orders over 100 pools behind the codec
 *     (decode, solve, encode) ÷ a bare `JSON.parse` of the same body.
 * Medians of several runs. No assertions: the figures are reported, not judged.
 */
import { performance } from 'node:perf_hooks';
import type { Figure } from './figure.js';
import { auctionOf } from '../test/fixtures/solver-auctions.js';
import { encodeAuction } from '../src/solver-api/codec.js';
import { CowMatcherEngine, EngineService } from '../src/solver-api/engines.js';
import { ThreadedEngine } from '../src/solver-api/engine-threads.js';

/**
 * An auction of `orders` orders with a deadline `ms` ahead, solved by `service`: how late the answer came after the
 * deadline (negative: before it) and the longest the event loop was held meanwhile (a 10 ms ticker's worst gap).
 */
async function againstDeadline(service: EngineService, orders: number, ms: number): Promise<{ lateMs: number; stallMs: number }> {
  const body = JSON.stringify({ ...(encodeAuction(auctionOf(orders, 100)) as object), deadline: new Date(Date.now() + ms).toISOString() });
  const deadline = Date.now() + ms;
  let last = performance.now();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last - 10);
    last = now;
  }, 10);
  await service.solve(body);
  const lateMs = Date.now() - deadline;
  clearInterval(ticker);
  stallMs = Math.max(stallMs, performance.now() - last - 10);
  return { lateMs, stallMs };
}

async function median(runs: number, f: () => unknown | Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  return times[Math.floor(times.length / 2)]!;
}

export async function benchSolverEngines(): Promise<Figure[]> {
  const big = auctionOf(10_000, 100);
  const wire = encodeAuction(big);
  await median(2, () => JSON.stringify(encodeAuction(big))); // warm-up
  const encodeMs = await median(7, () => JSON.stringify(encodeAuction(big)));
  const stringifyMs = await median(7, () => JSON.stringify(wire));

  const small = auctionOf(1_000, 100);
  const body = JSON.stringify(encodeAuction(small));
  const engine = new EngineService(new CowMatcherEngine({ chainId: 1, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' }));
  const answer = JSON.parse(await engine.solve(body)) as { solutions: Array<{ trades: unknown[] }> };
  const solveMs = await median(5, () => engine.solve(body));
  const parseMs = await median(7, () => JSON.parse(body));
  // issue 19: a 5 000-order auction with a 2 s deadline, on a worker thread vs on the event loop
  const network = { chainId: 1, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as const, amm: null, connectors: [], wrappedNative: null };
  const threaded = new EngineService(new ThreadedEngine('cow-matcher', network));
  await againstDeadline(threaded, 100, 2_000); // the thread loads its modules
  const offLoop = await againstDeadline(threaded, 5_000, 2_000);
  await threaded.close();
  const onLoop = await againstDeadline(new EngineService(new CowMatcherEngine(network)), 5_000, 2_000);
  return [
    {
      name: 'cow-matcher, 5 000 orders, deadline 2 s ahead: longest event-loop stall while solving',
      value: offLoop.stallMs,
      unit: 'ms',
      baseline: onLoop.stallMs,
      baselineUnit: 'ms when solved on the event loop',
      ratio: offLoop.stallMs / Math.max(1, onLoop.stallMs),
      note: `answered ${offLoop.lateMs} ms after the deadline on the thread (${onLoop.lateMs} ms on the event loop)`,
    },
    {
      name: 'solver API: encode auction (10 000 orders, 100 pools)',
      value: encodeMs,
      unit: 'ms',
      baseline: stringifyMs,
      baselineUnit: 'ms JSON.stringify of the same object',
      ratio: encodeMs / stringifyMs,
      note: `body ${(JSON.stringify(wire).length / 1024 / 1024).toFixed(1)} MiB`,
    },
    {
      name: 'cow-matcher engine solve (1 000 orders, 100 pools)',
      value: solveMs,
      unit: 'ms',
      baseline: parseMs,
      baselineUnit: 'ms JSON.parse of the auction',
      ratio: solveMs / parseMs,
      note: `${answer.solutions.reduce((n, s) => n + s.trades.length, 0)} orders matched`,
    },
  ];
}
