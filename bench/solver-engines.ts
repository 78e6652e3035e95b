/**
 * Solver Engine API figures (issue 12), each against a baseline measured in the same run:
 * (a) encoding an auction of 10 000 orders and 100 constant-product pools to its JSON body (our codec's encode
 *     + serialization, what the driver does once per auction) ÷ a bare `JSON.stringify` of the same wire object;
 * (b) the built-in `cow-matcher` engine answering an auction of 1 000 orders over 100 pools behind the codec
 *     (decode, solve, encode) ÷ a bare `JSON.parse` of the same body.
 * Medians of several runs. No assertions: the figures are reported, not judged.
 */
import { performance } from 'node:perf_hooks';
import type { Address } from 'viem';
import type { Figure } from './figure.js';
import { solvableOrder } from '../test/fixtures/solvable-orders.js';
import { PRICE_SCALE, type SolvableOrder } from '../src/solver/auction-types.js';
import { encodeAuction } from '../src/solver-api/codec.js';
import { toSolverOrder } from '../src/solver-api/orders.js';
import { CowMatcherEngine, EngineService } from '../src/solver-api/engines.js';
import type { SolverAuction, SolverConstantProductPool } from '../src/solver-api/schemas.js';

const TOKENS = 20;
const token = (i: number): Address => `0x${(0xa000 + i).toString(16).padStart(40, '0')}` as Address;

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function auctionOf(orderCount: number, poolCount: number): SolverAuction {
  const rnd = random(orderCount);
  const price = (i: number) => PRICE_SCALE / BigInt(1 + (i % 5)); // native price of token i
  const orders: SolvableOrder[] = [];
  for (let n = 0; n < orderCount; n++) {
    const a = Math.floor(rnd() * TOKENS);
    const b = (a + 1 + Math.floor(rnd() * (TOKENS - 1))) % TOKENS;
    // whole units (as most orders are): uniform prices then give most matches exactly their amounts
    const sellAmount = BigInt(1 + Math.floor(rnd() * 50)) * 10n ** 18n;
    // limit within ±2 % of the market rate: many orders of opposite sides cross
    const slack = BigInt(980 + 5 * Math.floor(rnd() * 8));
    const buyAmount = (sellAmount * price(a) * slack) / (price(b) * 1000n);
    const partiallyFillable = rnd() < 0.3;
    const kind = rnd() < 0.8 ? 'sell' : 'buy';
    orders.push(solvableOrder(n + 1, { sellToken: token(a), buyToken: token(b), sellAmount, buyAmount, kind, partiallyFillable, available: 10n ** 30n }));
  }
  const liquidity: SolverConstantProductPool[] = [];
  for (let i = 0; i < poolCount; i++) {
    const a = i % TOKENS;
    const b = (a + 1 + Math.floor(i / TOKENS)) % TOKENS;
    liquidity.push({
      kind: 'constantProduct',
      id: String(i),
      address: `0x${(0xb000 + i).toString(16).padStart(40, '0')}` as Address,
      router: '0x00000000000000000000000000000000000000dd',
      fee: '0.003',
      gasEstimate: 110_000n,
      tokens: { [token(a)]: { balance: 10n ** 24n * BigInt(1 + (b % 5)) }, [token(b)]: { balance: 10n ** 24n * BigInt(1 + (a % 5)) } },
    });
  }
  const tokens = Object.fromEntries(
    Array.from({ length: TOKENS }, (_, i) => [token(i), { decimals: 18, symbol: `T${i}`, referencePrice: price(i), availableBalance: 0n, trusted: false }]),
  );
  return { id: '1', tokens, orders: orders.map(toSolverOrder), liquidity, effectiveGasPrice: 10n ** 9n, deadline: new Date().toISOString(), surplusCapturingJitOrderOwners: [] };
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
  const answer = (await engine.solve(body)) as { solutions: Array<{ trades: unknown[] }> };
  const solveMs = await median(5, () => engine.solve(body));
  const parseMs = await median(7, () => JSON.parse(body));
  return [
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
