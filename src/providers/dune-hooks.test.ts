/**
 * The hooks analytics adapter against a local server speaking Dune's execution API, and GET /hooks answering
 * from it (rows, 500 envelope on failure) for a reference network the node does not serve.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { DuneHooks, hookFromRow } from './dune-hooks.js';
import { startProviderServer, type ProviderServer, type RecordedRequest } from './test-provider-server.js';
import { buildHttpServer, type HttpServer } from '../http/server.js';
import { HooksService, registerHooksRoutes, type HookRow } from '../aux/hooks/index.js';
import { openDatabase, type Database } from '../db/connection.js';

const row = (blockchain: string, n: number): Record<string, unknown> => ({
  environment: 'prod',
  block_time: '2026-11-25 10:00:00.000 UTC',
  is_bridging: false,
  success: true,
  app_code: `app-${blockchain}`,
  destination_chain_id: null,
  destination_token_address: null,
  hook_type: 'pre',
  app_id: null,
  target: '0x0000000000000000000000000000000000000001',
  gas_limit: 50_000 + n,
  app_hash: '0x' + 'ab'.repeat(32),
  tx_hash: '0x' + 'cd'.repeat(32),
});

describe('Dune hooks adapter', () => {
  let dune: ProviderServer;
  /** execution id → its parameters and how many polls it still answers "running" */
  const executions = new Map<string, { blockchain: string; period: string; pending: number }>();
  let failNext = false;

  function answer(req: RecordedRequest) {
    if (req.headers['x-dune-api-key'] !== 'secret') return { status: 401, body: { error: 'invalid API Key' } };
    const execute = /^\/api\/v1\/query\/(\d+)\/execute$/.exec(req.path);
    if (execute && req.method === 'POST') {
      const { query_parameters: p } = JSON.parse(req.body) as { query_parameters: { blockchain: string; period: string } };
      const id = `01EXEC${executions.size}`;
      executions.set(id, { ...p, pending: 2 });
      return { status: 200, body: { execution_id: id, state: 'QUERY_STATE_PENDING' } };
    }
    const results = /^\/api\/v1\/execution\/([^/]+)\/results$/.exec(req.path);
    const e = results ? executions.get(results[1]!) : undefined;
    if (!e) return { status: 404, body: { error: 'not found' } };
    if (e.pending-- > 0) return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_EXECUTING', is_execution_finished: false } };
    if (failNext) return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_FAILED', is_execution_finished: true } };
    const limit = Number(req.query.get('limit'));
    const offset = Number(req.query.get('offset'));
    const rows = [row(e.blockchain, 0), row(e.blockchain, 1), { ...row(e.blockchain, 2), success: 'maybe' }, row(e.blockchain, 3)].slice(offset, offset + limit);
    return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_COMPLETED', is_execution_finished: true, result: { rows, metadata: { row_count: rows.length } } } };
  }

  before(async () => {
    dune = await startProviderServer(answer);
  });
  after(async () => {
    await dune?.close();
  });

  const query = (blockchain: string) => ({ blockchain, period: 'last 1d', limit: 10, offset: 0, maxWaitTimeMs: 5_000 });

  it('runs its own execution per request and reads that execution, polling until it finished (no cross-talk)', async () => {
    let skipped = 0;
    const source = new DuneHooks({ apiKey: 'secret', baseUrl: dune.url, queryId: 42, pollMs: 10, onSkipped: (n) => (skipped += n) });
    const [main, base] = await Promise.all([source.hooks(query('mainnet')), source.hooks(query('base'))]);
    assert.deepEqual(main.map((r) => r.app_code), ['app-mainnet', 'app-mainnet', 'app-mainnet']);
    assert.deepEqual(base.map((r) => r.app_code), ['app-base', 'app-base', 'app-base']);
    assert.equal(skipped, 2, 'the malformed row of each answer is skipped');
    const executes = dune.requests.filter((r) => r.method === 'POST');
    assert.equal(executes.length, 2);
    assert.ok(executes.every((r) => r.path === '/api/v1/query/42/execute'));
    assert.deepEqual(executes.map((r) => JSON.parse(r.body).query_parameters.blockchain).sort(), ['base', 'mainnet']);
    const page = await source.hooks({ ...query('gnosis'), limit: 1, offset: 1 });
    assert.deepEqual(page.map((r) => r.gas_limit), [50_001]);
  });

  it('fails clearly when the execution fails, does not finish in time, or the key is refused', async () => {
    const source = new DuneHooks({ apiKey: 'secret', baseUrl: dune.url, pollMs: 10 });
    failNext = true;
    await assert.rejects(source.hooks(query('mainnet')), /QUERY_STATE_FAILED/);
    failNext = false;
    await assert.rejects(source.hooks({ ...query('mainnet'), maxWaitTimeMs: 0 }), /did not finish within 0 ms/);
    await assert.rejects(new DuneHooks({ apiKey: 'wrong', baseUrl: dune.url }).hooks(query('mainnet')), /dune/);
  });

  it('maps a row to every reference key, null where unknown', () => {
    const mapped = hookFromRow({ block_time: 't', success: 'true', hook_type: 'post', gas_limit: '21000', target: '0x1', tx_hash: '0x2' }) as HookRow;
    assert.deepEqual(Object.keys(mapped).sort(), ['app_code', 'app_hash', 'app_id', 'block_time', 'destination_chain_id', 'destination_token_address', 'environment', 'gas_limit', 'hook_type', 'is_bridging', 'success', 'target', 'tx_hash']);
    assert.equal(mapped.success, true);
    assert.equal(mapped.gas_limit, 21_000);
    assert.equal(mapped.app_hash, null);
    assert.equal(hookFromRow({ ...mapped, hook_type: 'middle' }), null);
  });

  describe('GET /hooks with the adapter', () => {
    let server: HttpServer;
    let database: Database;
    let url: string;

    before(async () => {
      database = await openDatabase({ kind: 'pglite', dataDir: null });
      server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
      const external = new DuneHooks({ apiKey: 'secret', baseUrl: dune.url, pollMs: 10 });
      registerHooksRoutes(server, { service: new HooksService({ db: database.db, served: new Map([['devnet', 31337]]), external }) });
      await server.listen({ host: '127.0.0.1', port: 0 });
      const address = server.server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    after(async () => {
      await server?.close();
      await database?.close();
    });

    it('answers a reference network from the provider, and 500 {hooks: [], count: 0, error} with no-store when it fails', async () => {
      const ok = await fetch(`${url}/hooks?blockchain=arbitrum&period=last%207d&maxWaitTimeMs=5000`);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('cache-control'), 'public, max-age=300');
      const body = (await ok.json()) as { hooks: HookRow[]; count: number };
      assert.equal(body.count, 3);
      assert.equal(body.hooks.length, body.count);
      assert.ok(body.hooks.every((h) => h.app_code === 'app-arbitrum'));

      failNext = true;
      const failed = await fetch(`${url}/hooks?blockchain=arbitrum&period=last%207d&maxWaitTimeMs=5000`);
      failNext = false;
      assert.equal(failed.status, 500);
      assert.equal(failed.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await failed.json(), { hooks: [], count: 0, error: 'Internal server error while fetching hooks' });
    });
  });
});
