/**
 * The hooks analytics adapter against a local server speaking Dune's execution API (it counts the executions it
 * is asked for), and GET /hooks answering from it for a reference network the node does not serve: one execution
 * per (blockchain, period) per 5 minutes however many requests arrive, pages cut from the cached rows, a request's
 * wait capped, a failing query not re-run per request.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { DuneHooks, hookFromRow, MAX_HOOKS_WAIT_MS } from './dune-hooks.js';
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
  /** while set, every execution keeps answering "running" */
  let hold = false;
  /** rows each execution yields: 3 good ones and a malformed one by default */
  let rowsOf = (blockchain: string): Record<string, unknown>[] => [row(blockchain, 0), row(blockchain, 1), { ...row(blockchain, 2), success: 'maybe' }, row(blockchain, 3)];
  let clock = 1_000_000_000;

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
    if (hold || e.pending-- > 0) return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_EXECUTING', is_execution_finished: false } };
    if (failNext) return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_FAILED', is_execution_finished: true } };
    const limit = Number(req.query.get('limit'));
    const offset = Number(req.query.get('offset'));
    const rows = rowsOf(e.blockchain).slice(offset, offset + limit);
    return { status: 200, body: { execution_id: results![1], state: 'QUERY_STATE_COMPLETED', is_execution_finished: true, result: { rows, metadata: { row_count: rows.length } } } };
  }

  const executes = () => dune.requests.filter((r) => r.method === 'POST');

  before(async () => {
    dune = await startProviderServer(answer);
  });
  beforeEach(() => {
    dune.requests.length = 0;
    failNext = false;
    hold = false;
  });
  after(async () => {
    await dune?.close();
  });

  const query = (blockchain: string, period = 'last 1d') => ({ blockchain, period, limit: 10, offset: 0, maxWaitTimeMs: 5_000 });
  const adapter = (options: Partial<ConstructorParameters<typeof DuneHooks>[0]> = {}) =>
    new DuneHooks({ apiKey: 'secret', baseUrl: dune.url, pollMs: 10, now: () => clock, ...options });

  it('runs its own execution per (blockchain, period) and reads that execution, polling until it finished (no cross-talk)', async () => {
    let skipped = 0;
    const source = adapter({ queryId: 42, onSkipped: (n) => (skipped += n) });
    const [main, base] = await Promise.all([source.hooks(query('mainnet')), source.hooks(query('base'))]);
    assert.deepEqual(main.map((r) => r.app_code), ['app-mainnet', 'app-mainnet', 'app-mainnet']);
    assert.deepEqual(base.map((r) => r.app_code), ['app-base', 'app-base', 'app-base']);
    assert.equal(skipped, 2, 'the malformed row of each answer is skipped');
    assert.equal(executes().length, 2);
    assert.ok(executes().every((r) => r.path === '/api/v1/query/42/execute'));
    assert.deepEqual(executes().map((r) => JSON.parse(r.body).query_parameters.blockchain).sort(), ['base', 'mainnet']);
    const page = await source.hooks({ ...query('gnosis'), limit: 1, offset: 1 });
    assert.deepEqual(page.map((r) => r.gas_limit), [50_001]);
  });

  it('runs one execution for many concurrent requests of a (blockchain, period), cuts every page from its rows, and keeps them 5 minutes', async () => {
    rowsOf = (blockchain) => Array.from({ length: 25 }, (_, n) => row(blockchain, n));
    try {
      const source = adapter({ pageSize: 10 });
      const pages = await Promise.all(Array.from({ length: 20 }, (_, i) => source.hooks({ ...query('polygon'), limit: 3, offset: i })));
      assert.equal(executes().length, 1, 'one paid execution for 20 requests');
      pages.forEach((page, i) => assert.deepEqual(page.map((r) => r.gas_limit), [0, 1, 2].map((k) => 50_000 + i + k).filter((g) => g < 50_025)));
      // every row was read, in pages of 10, from that one execution
      const reads = dune.requests.filter((r) => r.method === 'GET' && r.query.get('offset') !== '0');
      assert.deepEqual(reads.map((r) => r.query.get('offset')), ['10', '20']);

      clock += 5 * 60_000 - 1;
      assert.equal((await source.hooks({ ...query('polygon'), limit: 1000 })).length, 25);
      assert.equal(executes().length, 1, 'served from the cache for 5 minutes');
      await source.hooks(query('polygon', 'last 7d'));
      assert.equal(executes().length, 2, 'another period is another execution');
      clock += 1;
      await source.hooks(query('polygon'));
      assert.equal(executes().length, 3, 'run again once the 5 minutes are over');
    } finally {
      rowsOf = (blockchain) => [row(blockchain, 0), row(blockchain, 1), { ...row(blockchain, 2), success: 'maybe' }, row(blockchain, 3)];
    }
  });

  it('keeps at most maxRows rows of an execution', async () => {
    rowsOf = (blockchain) => Array.from({ length: 50 }, (_, n) => row(blockchain, n));
    try {
      const rows = await adapter({ pageSize: 7, maxRows: 20 }).hooks({ ...query('avalanche'), limit: 1000 });
      assert.equal(rows.length, 20);
      assert.ok(dune.requests.filter((r) => r.method === 'GET').every((r) => Number(r.query.get('offset')) + Number(r.query.get('limit')) <= 20));
    } finally {
      rowsOf = (blockchain) => [row(blockchain, 0), row(blockchain, 1), { ...row(blockchain, 2), success: 'maybe' }, row(blockchain, 3)];
    }
  });

  it('caps how long a request waits (a client asking 10 minutes waits at most the cap), while the execution goes on and fills the cache', async () => {
    // (the cap is 30 s; here 200 ms, so the test does not wait 30 s)
    assert.equal(MAX_HOOKS_WAIT_MS, 30_000);
    hold = true;
    const source = adapter({ maxWaitMs: 200 });
    await assert.rejects(source.hooks({ ...query('arbitrum'), maxWaitTimeMs: 600_000 }), /did not finish within 200 ms/);
    await assert.rejects(source.hooks({ ...query('arbitrum'), maxWaitTimeMs: 0 }), /did not finish within 0 ms/);
    assert.equal(executes().length, 1, 'the waiting requests shared the one execution');
    hold = false;
    assert.equal((await source.hooks(query('arbitrum'))).length, 3, 'the execution finished and is served');
    assert.equal(executes().length, 1);
  });

  it('remembers a failed execution for 30 s instead of paying for it on every request, then runs it again', async () => {
    const source = adapter();
    failNext = true;
    await assert.rejects(source.hooks(query('mainnet')), /QUERY_STATE_FAILED/);
    failNext = false;
    await assert.rejects(source.hooks(query('mainnet')), /QUERY_STATE_FAILED/);
    assert.equal(executes().length, 1);
    clock += 30_000;
    assert.equal((await source.hooks(query('mainnet'))).length, 3);
    assert.equal(executes().length, 2);
    await assert.rejects(adapter({ apiKey: 'wrong' }).hooks(query('mainnet')), /dune: query execution answered HTTP 401/);
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
      const external = new DuneHooks({ apiKey: 'secret', baseUrl: dune.url, pollMs: 10, now: () => clock });
      registerHooksRoutes(server, { service: new HooksService({ db: database.db, served: new Map([['devnet', 31337]]), external }) });
      await server.listen({ host: '127.0.0.1', port: 0 });
      const address = server.server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    after(async () => {
      await server?.close();
      await database?.close();
    });

    it('answers a reference network from the provider: one execution for many requests, pages from the cached rows', async () => {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => fetch(`${url}/hooks?blockchain=arbitrum&period=last%207d&maxWaitTimeMs=600000&limit=2&offset=${i % 3}`)),
      );
      assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
      assert.equal(answers[0]!.headers.get('cache-control'), 'public, max-age=300');
      const bodies = (await Promise.all(answers.map((a) => a.json()))) as Array<{ hooks: HookRow[]; count: number }>;
      bodies.forEach((body, i) => {
        assert.deepEqual(body.hooks.map((h) => h.gas_limit), [[50_000, 50_001], [50_001, 50_003], [50_003]][i % 3]);
        assert.equal(body.count, body.hooks.length);
      });
      assert.equal(executes().length, 1, 'ten requests, one paid execution');
    });

    it('answers 500 {hooks: [], count: 0, error} with no-store when the provider fails', async () => {
      failNext = true;
      const failed = await fetch(`${url}/hooks?blockchain=base&period=last%207d&maxWaitTimeMs=5000`);
      assert.equal(failed.status, 500);
      assert.equal(failed.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await failed.json(), { hooks: [], count: 0, error: 'Internal server error while fetching hooks' });
    });
  });
});
