/**
 * `npm run fuzz [-- <requests> [seed] [concurrency]]`: hostile input for every operation of the OpenAPI
 * document, through a real port (default 100 000 requests). Exits 1 with the findings if any answer breaks
 * the contract (see openapi-fuzz.ts).
 */
import { describeFindings, runFuzz } from './openapi-fuzz.js';
import { startFuzzTarget } from './target.js';

const requests = Number(process.argv[2] ?? 100_000);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
const concurrency = Number(process.argv[4] ?? 16);
if (!Number.isInteger(requests) || requests <= 0 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency <= 0) {
  console.error('usage: npm run fuzz -- [requests] [seed] [concurrency]');
  process.exit(2);
}

const target = await startFuzzTarget();
let failed = true;
try {
  console.log(`fuzzing ${target.app.baseUrl}: ${requests} requests, seed ${seed}, concurrency ${concurrency}`);
  let lastLog = 0;
  const report = await runFuzz({
    baseUrl: target.app.baseUrl, doc: target.doc, ctx: target.ctx, requests, seed, concurrency,
    onProgress: (done) => {
      if (done - lastLog >= 10_000 || done === requests) {
        lastLog = done;
        console.log(`  ${done} requests`);
      }
    },
  });
  const health = await fetch(`${target.app.baseUrl}/healthz`);
  console.log(`requests: ${report.requests} in ${report.seconds.toFixed(1)} s = ${report.perSecond.toFixed(0)}/s (real HTTP)`);
  console.log(`operations: ${report.operations} documented, all exercised; ${report.operationsAnsweredOk} answered a 2xx at least once`);
  if (report.neverOk.length) console.log(`  never 2xx: ${report.neverOk.join('; ')}`);
  console.log(`statuses: ${JSON.stringify(report.byStatus)}  modes: ${JSON.stringify(report.byMode)}`);
  console.log(`slowest operations (total ms): ${report.slowest.map(([k, ms]) => `${k} ${ms}`).join('; ')}`);
  console.log(`healthz after the run: ${health.status}`);
  if (report.findings.length) console.log(describeFindings(report.findings, seed));
  else console.log('no findings');
  failed = report.findings.length > 0 || health.status !== 200;
} finally {
  await target.app.stop();
}
process.exit(failed ? 1 : 0);
