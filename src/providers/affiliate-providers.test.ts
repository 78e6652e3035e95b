/**
 * The affiliate program's external adapters against local servers speaking the providers' wire formats: a
 * Strapi-style CMS as the code store (unique fields, v4 and v5 entry shapes, failures) mirrored into our
 * database, and the analytics provider's execute → this execution's results flow (no cross-talk between
 * concurrent requests, malformed rows rejected, our own statistics answering when it fails).
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { openDatabase, type Database } from '../db/connection.js';
import { AffiliateError } from '../aux/affiliate/affiliate-error.js';
import { AffiliateService } from '../aux/affiliate/affiliate-service.js';
import { DatabaseCodeStore } from '../aux/affiliate/code-store.js';
import { ComputedAffiliateStats } from '../aux/affiliate/computed-stats.js';
import { MirroredCodeStore } from '../aux/affiliate/mirrored-code-store.js';
import { AnalyticsAffiliateStats } from './analytics-affiliate-stats.js';
import { CmsAffiliateCodes } from './cms-affiliates.js';
import { ProviderError } from './data-source.js';
import { startProviderServer, type ProviderServer, type RecordedRequest } from './test-provider-server.js';

const terms = { rewardAmount: 20, triggerVolume: 250000, timeCapDays: 90, volumeCap: 2500000, revenueSplitAffiliatePct: 50, revenueSplitTraderPct: 50, revenueSplitDaoPct: 0 };
const wallet = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Address;

/** An in-memory Strapi collection `affiliates` with unique `code` and `walletAddress` (v4 entry shape), or without. */
function strapi(apiKey: string, options: { unique?: boolean } = {}) {
  const entries: Array<Record<string, unknown>> = [];
  return {
    entries,
    handler(req: RecordedRequest) {
      assert.equal(req.headers.authorization, `Bearer ${apiKey}`);
      assert.equal(req.path, '/api/affiliates');
      if (req.method === 'GET') {
        assert.equal(req.query.get('pagination[pageSize]'), '1');
        const [field, value] = [...req.query.entries()].find(([k]) => k.startsWith('filters['))!;
        const key = /^filters\[(\w+)\]\[\$eq\]$/.exec(field)![1]!;
        const found = entries.filter((e) => e[key] === value);
        return { status: 200, body: { data: found.map((e, i) => ({ id: i + 1, attributes: e })), meta: { pagination: { total: found.length } } } };
      }
      const { data } = JSON.parse(req.body) as { data: Record<string, unknown> };
      assert.equal(data.enabled, true);
      assert.match(String(data.signedMessage), /^0x/);
      if (options.unique !== false && entries.some((e) => e.code === data.code || e.walletAddress === data.walletAddress)) {
        return { status: 400, body: { data: null, error: { status: 400, name: 'ValidationError', message: 'This attribute must be unique' } } };
      }
      const entry: Record<string, unknown> = { ...data, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(), publishedAt: new Date().toISOString() };
      delete entry.signedMessage;
      entries.push(entry);
      return { status: 200, body: { data: { id: entries.length, attributes: entry }, meta: {} } };
    },
  };
}

describe('affiliate adapters', () => {
  let database: Database;
  let server: ProviderServer;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    server = await startProviderServer(() => ({ status: 404 }));
  });
  afterEach(() => server.assertNoFailures());
  after(async () => {
    await server?.close();
    await database?.close();
  });

  describe('Strapi CMS code store', () => {
    const cmsStore = (timeoutMs = 2_000) => new MirroredCodeStore(new CmsAffiliateCodes({ baseUrl: `${server.url}/api/`, apiKey: 'cms-key', defaultTerms: terms, timeoutMs }), new DatabaseCodeStore(database.db));

    it('registers through the CMS, mirrors into our database, and tells which unique field refused a duplicate', async () => {
      const cms = strapi('cms-key');
      server.setHandler((req) => cms.handler(req));
      const store = cmsStore();
      const created = await store.register({ code: 'CMS-CODE', walletAddress: wallet(1), signedMessage: '0xabcd', terms });
      assert.ok(created.ok);
      assert.equal(created.code.walletAddress, wallet(1));
      assert.equal((await new DatabaseCodeStore(database.db).byCode('CMS-CODE'))?.walletAddress, wallet(1), 'mirrored');
      assert.deepEqual(await store.register({ code: 'CMS-CODE', walletAddress: wallet(2), signedMessage: '0xabcd', terms }), { ok: false, conflict: 'code' });
      assert.deepEqual(await store.register({ code: 'CMS-OTHER', walletAddress: wallet(1), signedMessage: '0xabcd', terms }), { ok: false, conflict: 'wallet' });
      assert.equal((await store.byWallet(wallet(1)))?.code, 'CMS-CODE');
      assert.equal(await store.byCode('NOPE-NOPE'), null);
    });

    it('20 concurrent registrations of one code: one wins, nineteen conflicts', async () => {
      const cms = strapi('cms-key');
      server.setHandler((req) => cms.handler(req));
      const store = cmsStore();
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => store.register({ code: 'CMS-RACE', walletAddress: wallet(100 + i), signedMessage: '0x01', terms })));
      assert.equal(outcomes.filter((o) => o.ok).length, 1);
      assert.equal(cms.entries.length, 1);
    });

    it('enforces uniqueness itself when the CMS does not: 20 concurrent registrations of one code, and of one wallet, through a CMS without unique fields', async () => {
      const cms = strapi('cms-key', { unique: false });
      server.setHandler((req) => cms.handler(req));
      const store = cmsStore();
      const sameCode = await Promise.all(Array.from({ length: 20 }, (_, i) => store.register({ code: 'NOUNIQ-CODE', walletAddress: wallet(200 + i), signedMessage: '0x01', terms })));
      assert.equal(sameCode.filter((o) => o.ok).length, 1);
      assert.deepEqual(sameCode.filter((o) => !o.ok).map((o) => (o as { conflict: string }).conflict), Array(19).fill('code'));
      const sameWallet = await Promise.all(Array.from({ length: 20 }, (_, i) => store.register({ code: `NOUNIQ-W${i}`, walletAddress: wallet(300), signedMessage: '0x01', terms })));
      assert.equal(sameWallet.filter((o) => o.ok).length, 1);
      assert.equal(cms.entries.length, 2, 'the CMS received one entry per code and per wallet');
      // a code created in the CMS directly (not mirrored yet) is not registered a second time either
      cms.entries.push({ code: 'DIRECT-CODE', walletAddress: wallet(400), enabled: true, createdAt: new Date().toISOString() });
      assert.deepEqual(await store.register({ code: 'DIRECT-CODE', walletAddress: wallet(401), signedMessage: '0x01', terms }), { ok: false, conflict: 'code' });
      assert.equal(await new DatabaseCodeStore(database.db).byWallet(wallet(401)), null, 'the reservation was released');
      assert.equal(cms.entries.length, 3);
    });

    it('a failing CMS releases the reservation: the code can be registered once it is back', async () => {
      server.setHandler(() => ({ status: 500, body: { error: 'boom' } }));
      await assert.rejects(cmsStore().register({ code: 'RETRY-CODE', walletAddress: wallet(500), signedMessage: '0x01', terms }), ProviderError);
      const cms = strapi('cms-key');
      server.setHandler((req) => cms.handler(req));
      assert.equal((await cmsStore().register({ code: 'RETRY-CODE', walletAddress: wallet(500), signedMessage: '0x01', terms })).ok, true);
    });

    it('mirrors a code read from the CMS once, not on every read', async () => {
      const cms = strapi('cms-key');
      cms.entries.push({ code: 'READ-ONCE', walletAddress: wallet(600), enabled: true, createdAt: new Date().toISOString() });
      server.setHandler((req) => cms.handler(req));
      let writes = 0;
      const local = new (class extends DatabaseCodeStore {
        override async mirror(...args: Parameters<DatabaseCodeStore['mirror']>) {
          writes++;
          return super.mirror(...args);
        }
      })(database.db);
      const store = new MirroredCodeStore(new CmsAffiliateCodes({ baseUrl: `${server.url}/api/`, apiKey: 'cms-key', defaultTerms: terms, timeoutMs: 2_000 }), local);
      for (let i = 0; i < 10; i++) assert.equal((await store.byCode('READ-ONCE'))?.walletAddress, wallet(600));
      assert.equal(writes, 1);
    });

    it('reads a code created in the CMS directly (v5 flat entry, terms edited there) and mirrors it for bindings', async () => {
      server.setHandler(() => ({ status: 200, body: { data: [{ id: 9, documentId: 'd9', code: 'EDITED', walletAddress: wallet(9).toUpperCase().replace('0X', '0x'), enabled: true, rewardAmount: '30', triggerVolume: null, createdAt: '2026-01-02T03:04:05.000Z' }] } }));
      const found = await cmsStore().byCode('edited');
      assert.deepEqual([found?.code, found?.walletAddress, found?.rewardAmount, found?.triggerVolume], ['EDITED', wallet(9), 30, 250000]);
      assert.equal((await new DatabaseCodeStore(database.db).byCode('EDITED'))?.createdAt.toISOString(), '2026-01-02T03:04:05.000Z');
    });

    it('an unreachable or failing CMS is 502 (Unavailable), never "not found"', async () => {
      const service = new AffiliateService({ codes: cmsStore(300), stats: [], signature: { verify: async () => false }, terms });
      for (const reply of [{ status: 500, body: { error: 'boom' } }, { status: 200, body: { nope: true } }, 'hang' as const]) {
        server.setHandler(() => reply);
        await assert.rejects(service.affiliate(wallet(1)), (err: unknown) => err instanceof AffiliateError && err.kind === 'Unavailable' && !String(err.message).includes('cms-key'));
      }
    });
  });

  describe('analytics statistics', () => {
    const affiliateRow = (address: string, volume: unknown) => ({
      affiliate_address: address, referrer_code: 'ROW-CODE', total_volume: volume, trigger_volume: 250000, total_earned: 10, paid_out: 0, next_payout: 10,
      left_to_next_reward: 1000, active_traders: 1, total_traders: 2,
    });

    /** Each execution answers rows of its own address after one "executing" poll; the latest-result endpoint is never read. */
    function dune(rowFor: (address: string) => Record<string, unknown>) {
      let next = 0;
      const executions = new Map<string, { address: string; polls: number }>();
      return (req: RecordedRequest) => {
        assert.equal(req.headers['x-dune-api-key'], 'dune-key');
        const execute = /^\/api\/v1\/query\/(\d+)\/execute$/.exec(req.path);
        if (execute) {
          assert.equal(req.method, 'POST');
          const { query_parameters } = JSON.parse(req.body) as { query_parameters: { address: string } };
          const id = `exec-${++next}`;
          executions.set(id, { address: query_parameters.address, polls: 0 });
          return { status: 200, body: { execution_id: id, state: 'QUERY_STATE_PENDING' } };
        }
        const results = /^\/api\/v1\/execution\/([\w-]+)\/results$/.exec(req.path);
        assert.ok(results, `unexpected ${req.method} ${req.path}: only this execution's results may be read`);
        const execution = executions.get(results[1]!)!;
        if (execution.polls++ === 0) return { status: 200, body: { execution_id: results[1], state: 'QUERY_STATE_EXECUTING', is_execution_finished: false } };
        return {
          status: 200,
          body: {
            execution_id: results[1], state: 'QUERY_STATE_COMPLETED', is_execution_finished: true, execution_started_at: '2026-03-01T00:00:00Z', execution_ended_at: '2026-03-01T00:00:05Z',
            result: { rows: [rowFor(execution.address)], metadata: { total_row_count: 1 } },
          },
        };
      };
    }

    const source = () => new AnalyticsAffiliateStats({ apiKey: 'dune-key', affiliateStatsQueryId: 11, traderStatsQueryId: 12, baseUrl: server.url, pollMs: 10, maxWaitMs: 5_000 });

    it('concurrent requests for different addresses each read their own execution’s rows', async () => {
      server.setHandler(dune((address) => affiliateRow(address, Number(BigInt(address) % 1000n))));
      const [a, b] = await Promise.all([source().affiliateStats(wallet(7)), source().affiliateStats(wallet(8))]);
      assert.deepEqual([a?.affiliate_address, a?.total_volume, a?.lastUpdatedAt], [wallet(7), 7, '2026-03-01T00:00:05.000Z']);
      assert.deepEqual([b?.affiliate_address, b?.total_volume], [wallet(8), 8]);
    });

    it('a malformed row is a provider error (never a silent 0), and our computed statistics answer instead', async () => {
      server.setHandler(dune((address) => affiliateRow(address, null)));
      await assert.rejects(source().affiliateStats(wallet(7)), (err: unknown) => err instanceof ProviderError && /total_volume/.test(err.message));
      const failures: string[] = [];
      const service = new AffiliateService({
        codes: new DatabaseCodeStore(database.db), stats: [source(), new ComputedAffiliateStats(database.db)], signature: { verify: async () => false }, terms,
        onSourceError: (name) => failures.push(name),
      });
      await assert.rejects(service.affiliateStats(wallet(7)), (err: unknown) => err instanceof AffiliateError && err.kind === 'NotFound');
      assert.deepEqual(failures, ['analytics']);
    });
  });
});
