/**
 * GET /metrics of a whole node (devnet, PGlite, the node's own auction loop): after real requests and a real
 * settlement, the Prometheus text has every family with route templates (never raw paths or UIDs), the
 * errorType of rejected orders, auction/solution/settlement outcomes, the indexer lag and process metrics.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { createMetrics } from '../src/metrics/metrics.js';

async function scrape(app: TestApp): Promise<string> {
  const res = await fetch(`${app.baseUrl}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** the value of one sample line (name + exact label set), or null when absent */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : null;
}

async function waitForSample(app: TestApp, series: string, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let text = '';
  while (Date.now() < deadline) {
    text = await scrape(app);
    if ((sample(text, series) ?? 0) > 0) return text;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`${what}: no ${series} within ${timeoutMs} ms; last scrape:\n${text.split('\n').filter((l) => l.startsWith('batchbook_') && !l.includes('process_') && !l.includes('nodejs_')).join('\n')}`);
}

describe('GET /metrics', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
  });
  after(async () => {
    await app?.stop();
  });

  it('has HTTP, order, auction, indexer, SSE and process families with bounded labels', async () => {
    const d = app.devnet!.describe();
    const trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    const weth = d.tokens[0]!.address as Hex;
    const usdc = d.tokens[1]!.address as Hex;
    const missingUid = `0x${'ab'.repeat(56)}`;
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${missingUid}`)).status, 404);
    assert.equal((await call(app.baseUrl, 'GET', '/no/such/path')).status, 404);
    // a rejected order (zero sell amount) and a created one that the node's auction loop settles through the AMM
    const zero = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 0n, buyAmount: 1n });
    const rejected = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(zero, await signOrder(trader, zero), 'eip712', trader.address));
    assert.equal(rejected.status, 400);
    const errorType = rejected.body.errorType as string;
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n });
    const created = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const text = await waitForSample(app, 'batchbook_settlements_total{chain="devnet",outcome="mined"}', 'the order is settled');
    assert.equal(sample(text, 'batchbook_orders_total{result="created",error_type=""}'), 1);
    assert.equal(sample(text, `batchbook_orders_total{result="rejected",error_type="${errorType}"}`), 1);
    assert.equal(sample(text, 'batchbook_http_request_duration_seconds_count{method="GET",route="/devnet/api/v1/orders/:UID",status_code="404"}'), 1);
    assert.equal(sample(text, 'batchbook_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}'), 1);
    assert.equal(sample(text, 'batchbook_http_request_duration_seconds_count{method="POST",route="/devnet/api/v1/orders",status_code="201"}'), 1);
    assert.ok(!text.includes(missingUid.slice(2)) && !text.includes('/no/such/path'), 'no raw path or UID as a label');
    assert.ok((sample(text, 'batchbook_auction_build_seconds_count{chain="devnet"}') ?? 0) >= 1, 'auction build time');
    assert.ok((sample(text, 'batchbook_solutions_total{chain="devnet",outcome="winner"}') ?? 0) >= 1, 'a winning solution');
    // the lag is head − last indexed block: an indexer that keeps up shows a small whole number (a stuck one, or a
    // gauge that only counts the head, grows with every 1 s block)
    let lag = sample(text, 'batchbook_indexer_lag_blocks{chain="devnet"}');
    for (let i = 0; i < 240 && !(lag !== null && lag <= 2); i++) {
      await new Promise((r) => setTimeout(r, 250));
      lag = sample(await scrape(app), 'batchbook_indexer_lag_blocks{chain="devnet"}');
    }
    assert.ok(lag !== null && Number.isInteger(lag) && lag >= 0 && lag <= 2, `indexer lag ${lag}`);
    assert.equal(sample(text, 'batchbook_sse_connections{stream="balances"}'), 0);
    assert.ok((sample(text, 'batchbook_process_cpu_user_seconds_total') ?? 0) > 0, 'process metrics');
    assert.match(text, /# TYPE batchbook_provider_errors_total counter/);
    assert.match(text, /# TYPE batchbook_outbox_depth gauge/);
  });
});

describe('createMetrics', () => {
  it('keeps apps apart (own registry) and reads gauges at scrape time; a failing reading is left out', async () => {
    const a = createMetrics({ processMetrics: false });
    const b = createMetrics({ processMetrics: false });
    a.providers.error('coingecko');
    let depth = 3;
    a.outbox.observe(() => depth);
    a.sseConnections.observe('balances', () => 2);
    a.sseConnections.observe('broken', () => Promise.reject(new Error('gone')));
    let text = await a.registry.metrics();
    assert.equal(sample(text, 'batchbook_provider_errors_total{provider="coingecko"}'), 1);
    assert.equal(sample(text, 'batchbook_outbox_depth'), 3);
    assert.equal(sample(text, 'batchbook_sse_connections{stream="balances"}'), 2);
    assert.equal(sample(text, 'batchbook_sse_connections{stream="broken"}'), null);
    depth = 7;
    text = await a.registry.metrics();
    assert.equal(sample(text, 'batchbook_outbox_depth'), 7);
    assert.equal(sample(await b.registry.metrics(), 'batchbook_provider_errors_total{provider="coingecko"}'), null);
  });
});
