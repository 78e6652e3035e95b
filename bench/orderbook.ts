/**
 * Order-book figures (issue 5), each against a baseline measured in the same run on the same machine:
 * - order intake: sustained POST /orders (after a warm-up round) over real HTTP as an SDK sends them (signed for a quote, carrying its
 *   id; full validation incl. chain reads, the quote found by id, storage in PGlite; 4 requests in flight from a
 *   client in a worker thread) per second ÷ raw ECDSA recoveries per second on the main thread (the mean of right before and right after);
 * - quote latency: median POST /quote ÷ median of one direct router `getAmountsOut` eth_call (the two alternated);
 * - the same intake on a node over PostgreSQL ÷ on PGlite (where a PostgreSQL server answers).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { recoverAddress, createPublicClient, http, parseAbi, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { startTestApp, type TestApp } from '../test/fixtures/app.js';
import { createTestPostgres } from '../test/fixtures/databases.js';
import { skipUnless } from '../test/fixtures/required-services.js';
import { makeOrder, orderBody, signOrder } from '../test/fixtures/orders.js';
import type { Figure } from './figure.js';

const INTAKE_ORDERS = 400;
let intakeRuns = 0;
const QUOTES = 200;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
}

async function recoveriesPerSecond(): Promise<number> {
  const key: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
  const hashes: Hex[] = Array.from({ length: 16 }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}` as Hex);
  const sigs = await Promise.all(hashes.map((hash) => sign({ hash, privateKey: key, to: 'hex' })));
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < 1500) {
    await recoverAddress({ hash: hashes[n % 16]!, signature: sigs[n % 16]! });
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

/** The devnet's first trader, WETH and USDC, and a JSON POST to the node. */
function devnetTrading(app: TestApp) {
  const d = app.devnet!.describe();
  return {
    d,
    trader: privateKeyToAccount(d.accounts[0]!.privateKey),
    weth: d.tokens[0]!.address as Hex,
    usdc: d.tokens[1]!.address as Hex,
    post: (path: string, body: unknown) => fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
}

/**
 * Order intake as an SDK submits it: one quote, then orders signed for it that carry its id (distinct UIDs through
 * validTo), signed beforehand and submitted with 4 in flight. Orders per second, and how many were refused.
 */
export async function intake(app: TestApp): Promise<{ perSecond: number; failed: number }> {
  const { trader, weth, usdc, post } = devnetTrading(app);
  const quoted = await post('/devnet/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 15n) });
  if (quoted.status !== 200) throw new Error(`quote failed: ${quoted.status} ${await quoted.text()}`);
  const { id: quoteId, quote } = (await quoted.json()) as { id: number; quote: { sellAmount: string; feeAmount: string } };
  const signedSellAmount = BigInt(quote.sellAmount) + BigInt(quote.feeAmount);
  // distinct UIDs across runs on one node too
  const firstValidTo = Math.floor(Date.now() / 1000) + 1200 + intakeRuns++ * INTAKE_ORDERS;
  const bodies: unknown[] = [];
  for (let i = 0; i < INTAKE_ORDERS; i++) {
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: signedSellAmount, buyAmount: 1n, validTo: firstValidTo + i });
    bodies.push({ ...orderBody(order, await signOrder(trader, order), 'eip712', trader.address), quoteId });
  }
  return submitInWorker(`${app.baseUrl}/devnet/api/v1/orders`, bodies.map((b) => JSON.stringify(b)));
}

/**
 * The submitting client, in a worker thread so that it does not share the node's event loop (as the usdPrice bench
 * and the fuzz client): node:http with INTAKE_IN_FLIGHT keep-alive sockets, each posting the next body when its
 * answer arrives. Plain JS: eval workers are not transpiled.
 */
const SUBMITTER = `
(async () => {
  const { parentPort, workerData } = await import('node:worker_threads');
  const http = await import('node:http');
  const { url, bodies, inFlight } = workerData;
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const post = (body) => new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < bodies.length) if ((await post(bodies[next++])) !== 201) failed++;
  }));
  const ms = performance.now() - started;
  agent.destroy();
  parentPort.postMessage({ failed, ms });
})();
`;
const INTAKE_IN_FLIGHT = 4;

function submitInWorker(url: string, bodies: string[]): Promise<{ perSecond: number; failed: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(SUBMITTER, { eval: true, workerData: { url, bodies, inFlight: INTAKE_IN_FLIGHT } });
    worker.once('message', (m: { failed: number; ms: number }) => {
      resolve({ perSecond: bodies.length / (m.ms / 1000), failed: m.failed });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** The same intake on a node over the local PostgreSQL (a fresh database); null, with a line, without a server. */
async function intakeOnPostgres(): Promise<{ perSecond: number; failed: number } | null> {
  if (await skipUnless('postgres')) return null;
  const pg = await createTestPostgres();
  try {
    const app = await startTestApp({ DATABASE_URL: pg.url });
    try {
      await intake(app); // warm-up, as on PGlite
      return await intake(app);
    } finally {
      await app.stop();
    }
  } finally {
    await pg.drop();
  }
}

export async function benchOrderBook(): Promise<Figure[]> {
  const app = await startTestApp();
  try {
    const { d, trader, weth, usdc, post } = devnetTrading(app);

    // --- quote latency vs one direct getAmountsOut
    const client = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
    const router = d.contracts.ammRouter;
    const abi = parseAbi(['function getAmountsOut(uint256, address[]) view returns (uint256[])']);
    // alternated one by one, so that the machine's load at any moment weighs on both sides alike
    const direct: number[] = [];
    const quotes: number[] = [];
    for (let i = 0; i < QUOTES; i++) {
      let t = performance.now();
      await client.readContract({ address: router, abi, functionName: 'getAmountsOut', args: [10n ** 18n + BigInt(i), [weth, usdc]] });
      direct.push(performance.now() - t);
      t = performance.now();
      const res = await post('/devnet/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 18n + BigInt(i)) });
      await res.text();
      if (res.status !== 200) throw new Error(`quote failed: ${res.status}`);
      quotes.push(performance.now() - t);
    }

    // sustained intake: a first round warms the node up (JIT, the recovery threads, the database's caches); the
    // recovery baseline is measured right before and right after it (the mean), so that a change of the machine's
    // load during the run weighs on both sides alike
    await intake(app);
    const recoveriesBefore = await recoveriesPerSecond();
    const pglite = await intake(app);
    const recoveries = (recoveriesBefore + (await recoveriesPerSecond())) / 2;
    const postgres = await intakeOnPostgres();

    return [
      {
        name: 'order-intake',
        value: pglite.perSecond,
        unit: 'orders/s (HTTP, with quote id, full validation, PGlite, 4 in flight, client in a worker)',
        baseline: recoveries,
        baselineUnit: 'raw ECDSA recoveries/s (one thread, mean of before and after)',
        ratio: pglite.perSecond / recoveries,
        note: `${INTAKE_ORDERS} orders${pglite.failed ? `, ${pglite.failed} refused` : ''}`,
      },
      ...(postgres
        ? [
            {
              name: 'order-intake: PostgreSQL ÷ PGlite',
              value: postgres.perSecond,
              unit: 'orders/s on PostgreSQL (same load, a node of its own)',
              baseline: pglite.perSecond,
              baselineUnit: 'orders/s on PGlite',
              ratio: postgres.perSecond / pglite.perSecond,
              note: `${INTAKE_ORDERS} orders${postgres.failed ? `, ${postgres.failed} refused` : ''}`,
            },
          ]
        : []),
      {
        name: 'quote-latency',
        value: median(quotes),
        unit: 'ms median POST /quote',
        baseline: median(direct),
        baselineUnit: 'ms median getAmountsOut eth_call',
        ratio: median(quotes) / median(direct),
        note: `p99 ${p99(quotes).toFixed(1)} ms vs ${p99(direct).toFixed(1)} ms`,
      },
    ];
  } finally {
    await app.stop();
  }
}
