/**
 * The chain's RPC node stalls (a proxy holds every request) and then dies (the proxy refuses everything), under
 * a running node whose own JSON-RPC traffic goes through that proxy: each request is bounded by the outbound
 * timeout and answers in its API's error envelope (500 order book / aux, /readyz 503) instead of hanging; the
 * indexer and auction loops resume by themselves once the node answers again. (anvil itself dying stops the node,
 * which says so — test/start.test.ts — and `npm start` restarts it with its state: kill9.fault.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../../src/chain/faulty-rpc-proxy.js';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { waitFor } from '../fixtures/wait-for.js';
import { figure } from './figures.js';

const TIMEOUT_MS = 2000;

describe('the RPC node stalls, then dies, under a running node', () => {
  let proxy: FaultyRpcProxy;
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ OUTBOUND_TIMEOUT_MS: String(TIMEOUT_MS), AUCTIONS: 'true' }, { devnetRpcVia: async (url) => (proxy = await startFaultyRpcProxy(url)).url });
  });
  after(async () => {
    await app?.stop();
    await proxy?.close();
  });

  /** a request with a hang guard far above the outbound timeout: it must answer, whatever it answers */
  async function timed(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
    const t = Date.now();
    const res = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, body: json, ms: Date.now() - t };
  }

  function requests() {
    const d = app.devnet!.describe();
    const weth = d.tokens.find((t) => t.symbol === 'WETH')!.address;
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    const trader = d.accounts.find((a) => a.role === 'trader')!.address;
    // a fresh user each time: no cached balances
    const user = `0x${Math.floor(Math.random() * 2 ** 48).toString(16).padStart(40, '0')}`;
    return Promise.all([
      timed('POST', '/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader, kind: 'sell', sellAmountBeforeFee: String(10n ** 18n + BigInt(Date.now())), validFor: 600, appData: '{}' }),
      timed('GET', `/31337/accounts/${user}/balances?tokens=${weth}`),
      timed('GET', '/readyz'),
    ]);
  }

  /**
   * Requests while the node is stalled or down. A quote may be priced from the current block's memory (pool
   * reserves, gas price) until the block feed's poll fails, which takes at most the outbound timeout and one
   * poll: so quotes are repeated until one needs the chain, and the delay is a figure.
   */
  async function whileUnreachable(what: string) {
    const since = Date.now();
    const [first, balances, ready] = await requests();
    let quote = first;
    while (quote.status === 200 && Date.now() - since < 4 * TIMEOUT_MS + 5_000) {
      await new Promise((r) => setTimeout(r, 100));
      [quote] = await requests();
    }
    figure(`rpc.${what}.answer_ms`, { quote: quote.ms, balances: balances.ms, readyz: ready.ms });
    figure(`rpc.${what}.quote_from_memory_until_ms`, Date.now() - since);
    return [quote, balances, ready] as const;
  }

  async function resumes(what: string): Promise<void> {
    const indexer = app.indexers.get('devnet')!;
    const from = indexer.stats.checkpoint ?? -1;
    const back = Date.now();
    await waitFor(`the indexer to resume after the ${what}`, () => (indexer.stats.checkpoint ?? -1) > from + 1, 120_000, 100);
    const loop = app.auctionLoops.get('devnet');
    if (loop) {
      const before = loop.last;
      await waitFor(`the auction loop to run a cycle after the ${what}`, () => loop.last !== before && loop.last !== null, 120_000, 100);
    }
    figure(`rpc.${what}.seconds_until_indexer_and_auction_resume`, ((Date.now() - back) / 1000).toFixed(1));
    const [quote, balances, ready] = await requests();
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    assert.equal(balances.status, 200, JSON.stringify(balances.body));
    assert.equal(ready.status, 200);
  }

  it('answers every request within its timeout while the node stalls, and the loops resume after', async () => {
    const indexer = app.indexers.get('devnet')!;
    await waitFor('the indexer to index', () => indexer.stats.checkpoint !== null, 120_000);
    const [q0, b0, r0] = await requests();
    assert.deepEqual([q0.status, b0.status, r0.status], [200, 200, 200]);

    proxy.stalled = true;
    figure('rpc.stall.outbound_timeout_ms', TIMEOUT_MS);
    const [quote, balances, ready] = await whileUnreachable('stall');
    assert.equal(quote.status, 500, JSON.stringify(quote.body));
    assert.deepEqual(quote.body, { errorType: 'InternalServerError', description: '' });
    assert.equal(balances.status, 500, JSON.stringify(balances.body));
    assert.deepEqual(Object.keys(balances.body), ['message']);
    assert.equal(ready.status, 503);
    await waitFor('the indexer to notice the stall', () => indexer.stats.lastError !== null, 120_000, 100);
    proxy.stalled = false;
    await resumes('stall');
  });

  it('answers every request while the node is down, and the loops resume after', async () => {
    proxy.down = true;
    const [quote, balances, ready] = await whileUnreachable('down');
    assert.equal(quote.status, 500, JSON.stringify(quote.body));
    assert.equal(balances.status, 500, JSON.stringify(balances.body));
    assert.equal(ready.status, 503);
    proxy.down = false;
    await resumes('outage');
  });
});
