/**
 * Short mode of `npm run fuzz` (test/fuzz/): hostile requests generated from our own OpenAPI document for every
 * documented operation, through a real port, with a fixed seed. Every answer must be documented (status, media
 * type, schema), errors in their API's envelope, and no 5xx, crash or hang. Failures print the seed and the
 * requests that reproduce them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeFindings, runFuzz } from './fuzz/openapi-fuzz.js';
import { startFuzzTarget, type FuzzTarget } from './fuzz/target.js';

const SEED = 20261125;
const REQUESTS = 1000;

describe('OpenAPI fuzz (short mode)', () => {
  let target: FuzzTarget;
  before(async () => {
    target = await startFuzzTarget();
  });
  after(async () => {
    await target?.app.stop();
  });

  it(`answers ${REQUESTS} hostile requests as documented (seed ${SEED})`, async () => {
    const report = await runFuzz({ baseUrl: target.app.baseUrl, doc: target.doc, ctx: target.ctx, requests: REQUESTS, seed: SEED, concurrency: 8 });
    assert.equal(report.requests, REQUESTS);
    assert.deepEqual(report.findings, [], describeFindings(report.findings, SEED));
    // the generator covers the whole document, and valid requests get through to real answers
    assert.ok(report.operations >= 80, `only ${report.operations} operations in the document`);
    assert.ok(report.operationsAnsweredOk >= report.operations / 2, `only ${report.operationsAnsweredOk} of ${report.operations} operations answered a 2xx`);
    const health = await fetch(`${target.app.baseUrl}/healthz`);
    assert.equal(health.status, 200, 'the node still answers after the fuzz');
  });
});
