/**
 * `npm run fuzz [-- <requests> [seed] [concurrency]]`: hostile input for every operation of the OpenAPI
 * document, through a real port (default 100 000 requests). Exits 1 with the findings if any answer breaks
 * the contract (see openapi-fuzz.ts). FUZZ_MINUTES=n stops starting requests after n minutes (exit 3 when
 * fewer than asked were sent); findings are printed as they are found.
 */
import { Worker } from 'node:worker_threads';
import { describeFindings, type Finding, type FuzzReport } from './openapi-fuzz.js';
import { startFuzzTarget } from './target.js';

const requests = Number(process.argv[2] ?? 100_000);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
const concurrency = Number(process.argv[4] ?? 16);
const minutes = Number(process.env.FUZZ_MINUTES ?? 0);
if (!Number.isInteger(requests) || requests <= 0 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency <= 0) {
  console.error('usage: npm run fuzz -- [requests] [seed] [concurrency]');
  process.exit(2);
}

// FUZZ_AUCTIONS=true: auctions run, so that the auction and solver-competition routes answer 2xx too (slower)
const target = await startFuzzTarget({ AUCTIONS: process.env.FUZZ_AUCTIONS ?? 'false' });
let failed = true;
let exitCode = 0;
// Ctrl-C or a kill: stop the node (and its devnet) before leaving
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: stopping the node`);
    void target.app.stop().finally(() => process.exit(130));
  });
}
try {
  console.log(`fuzzing ${target.app.baseUrl}: ${requests} requests, seed ${seed}, concurrency ${concurrency}`);
  let lastLog = 0;
  // the client runs in a worker thread, the node under test alone on this thread's event loop
  // (Node 20 does not apply `--import tsx` to a worker's .ts entry: the worker registers tsx, then imports it)
  const entry = JSON.stringify(new URL('./client-worker.ts', import.meta.url).href);
  const worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${entry}); })`, {
    eval: true,
    workerData: { baseUrl: target.app.baseUrl, doc: target.doc, ctx: target.ctx, requests, seed, concurrency, stopAt: minutes > 0 ? Date.now() + minutes * 60_000 : undefined },
  });
  const report = await new Promise<FuzzReport>((resolve, reject) => {
    worker.on('message', (m: { progress?: number; report?: FuzzReport; finding?: Finding }) => {
      if (m.report) resolve(m.report);
      else if (m.finding) console.log(`  finding: ${describeFindings([m.finding], seed).split('\n').slice(1).join('\n')}`);
      else if (m.progress !== undefined && (m.progress - lastLog >= 10_000 || m.progress === requests)) {
        lastLog = m.progress;
        console.log(`  ${m.progress} requests`);
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the fuzz client exited (${code}) before its report`)));
  });
  await worker.terminate();
  const health = await fetch(`${target.app.baseUrl}/healthz`);
  console.log(`requests: ${report.requests} in ${report.seconds.toFixed(1)} s = ${report.perSecond.toFixed(0)}/s (real HTTP, client in a worker thread)`);
  console.log(`operations: ${report.operations} documented, all exercised; ${report.operationsAnsweredOk} answered a 2xx at least once`);
  if (report.neverOk.length) console.log(`  never 2xx: ${report.neverOk.join('; ')}`);
  console.log(`statuses: ${JSON.stringify(report.byStatus)}  modes: ${JSON.stringify(report.byMode)}`);
  console.log(`slowest operations (total ms): ${report.slowest.map(([k, ms]) => `${k} ${ms}`).join('; ')}`);
  console.log(`healthz after the run: ${health.status}`);
  if (report.findings.length) console.log(describeFindings(report.findings, seed));
  else console.log('no findings');
  failed = report.findings.length > 0 || health.status !== 200;
  if (!failed && report.requests < requests) {
    console.log(`incomplete: FUZZ_MINUTES=${minutes} ran out after ${report.requests} of ${requests} requests`);
    exitCode = 3;
  }
} finally {
  await target.app.stop();
}
process.exit(failed ? 1 : exitCode);
