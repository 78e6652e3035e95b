/**
 * usdPrice throughput (issue 7): cached `GET /{chainId}/tokens/{token}/usdPrice` requests per second over real
 * HTTP — the full server stack of buildHttpServer (validation, error handler, CORS, rate-limit plugin) and the
 * market services (ERC-20 check, fallback chain, first-party cache hit) — divided by the requests per second of a
 * bare Fastify route returning a constant, on the same machine in the same run, with the same client.
 *
 * Client: CONNECTIONS requests in flight on exactly CONNECTIONS keep-alive sockets (node:http Agent, maxSockets),
 * in a worker thread so it does not share the servers' event loop. node:http rather than fetch: on the 2-core
 * machine fetch topped out near 100 requests/s against the bare route (node:http ≈ 5× that), so a fetch client
 * would have measured itself. Rounds are paired (bare then usdPrice, then the other way round) and the figure is
 * the median of the per-round ratios, so load from other processes drifting during the run hits both sides alike.
 * A third paired measurement — a constant route on the same buildHttpServer stack — goes into the note, to split
 * the gap into the server stack's share and the market code's share.
 */
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { pino } from 'pino';
import { startTestApp } from '../test/fixtures/app.js';
import { buildHttpServer } from '../src/http/server.js';
import { buildMarketServices, registerMarketRoutes } from '../src/aux/market/index.js';
import type { Figure } from './figure.js';

const CONNECTIONS = 16;
const ROUND_MS = 1_500;
const WARMUP_MS = 500;
const ROUNDS = 6;

/** The load generator, run in a worker thread (plain JS: eval workers are not transpiled). */
const LOAD_GENERATOR = `
(async () => {
  // dynamic import: the eval worker may be loaded as CommonJS or as an ES module
  const { parentPort, workerData } = await import('node:worker_threads');
  const http = await import('node:http');
  const { url, connections, durationMs } = workerData;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const get = () => new Promise((resolve) => {
    http.get(url, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); }).on('error', () => resolve(0));
  });
  let done = 0;
  let failed = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      if ((await get()) === 200) done++; else failed++;
    }
  }));
  const ms = performance.now() - started;
  agent.destroy();
  parentPort.postMessage({ done, failed, ms });
})();
`;

function requestsPerSecond(url: string, durationMs: number): Promise<{ rps: number; failed: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(LOAD_GENERATOR, { eval: true, workerData: { url, connections: CONNECTIONS, durationMs } });
    worker.once('message', (m: { done: number; failed: number; ms: number }) => {
      resolve({ rps: m.done / (m.ms / 1000), failed: m.failed });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function benchUsdPrice(): Promise<Figure> {
  const app = await startTestApp();
  const bare = Fastify({ logger: false });
  let server: Awaited<ReturnType<typeof buildHttpServer>> | null = null;
  try {
    const network = app.networks[0]!;
    const weth = app.devnet!.describe().tokens[0]!.address;
    const services = buildMarketServices(
      network,
      app.database.db,
      { coingeckoApiKey: null, analyticsApiKey: null, externalQuoteUrl: null, outboundTimeoutMs: 10_000 },
      { nativePrices: app.orderBooks.get(network.name)?.nativePrices },
    );
    server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'bench' });
    registerMarketRoutes(server, { chains: new Map([[network.chainId, { network, ...services }]]) });
    server.get('/bench/constant', { config: { api: 'aux' } }, async () => ({ price: 3000 }));
    await server.listen({ host: '127.0.0.1', port: 0 });
    bare.get('/price', async () => ({ price: 3000 }));
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const portOf = (s: { server: { address(): unknown } }) => (s.server.address() as { port: number }).port;
    const usdUrl = `http://127.0.0.1:${portOf(server)}/devnet/tokens/${weth}/usdPrice`;
    const bareUrl = `http://127.0.0.1:${portOf(bare)}/price`;
    const stackUrl = `http://127.0.0.1:${portOf(server)}/bench/constant`;

    const first = await fetch(usdUrl);
    const body = (await first.json()) as { price?: number };
    if (first.status !== 200 || !(typeof body.price === 'number' && body.price > 0)) throw new Error(`usdPrice failed: ${first.status} ${JSON.stringify(body)}`);

    await requestsPerSecond(bareUrl, WARMUP_MS);
    await requestsPerSecond(usdUrl, WARMUP_MS);
    const rounds: Array<{ usd: number; bare: number; stack: number }> = [];
    let failed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const urls = [bareUrl, usdUrl, stackUrl];
      const order = round % 2 === 0 ? urls : [...urls].reverse();
      const results = new Map<string, number>();
      for (const url of order) {
        const r = await requestsPerSecond(url, ROUND_MS);
        results.set(url, r.rps);
        failed += r.failed;
      }
      rounds.push({ usd: results.get(usdUrl)!, bare: results.get(bareUrl)!, stack: results.get(stackUrl)! });
    }
    const value = median(rounds.map((r) => r.usd));
    const baseline = median(rounds.map((r) => r.bare));
    const ratios = rounds.map((r) => r.usd / r.bare);
    const stackRatio = median(rounds.map((r) => r.stack / r.bare));
    const marketRatio = median(rounds.map((r) => r.usd / r.stack));
    return {
      name: 'usd-price',
      value,
      unit: `requests/s cached GET usdPrice (HTTP, ${CONNECTIONS} keep-alive connections, client in a worker)`,
      baseline,
      baselineUnit: `requests/s bare Fastify route returning a constant (same client)`,
      ratio: median(ratios),
      note:
        `median of ${ROUNDS} paired ${ROUND_MS / 1000} s rounds (ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); ` +
        `constant route on the same server stack ÷ bare ${stackRatio.toFixed(2)}, usdPrice ÷ that ${marketRatio.toFixed(2)}${failed ? `; ${failed} non-200` : ''}`,
    };
  } finally {
    await server?.close();
    await bare.close();
    await app.stop();
  }
}
