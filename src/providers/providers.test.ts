/**
 * External adapters against local HTTP servers speaking each provider's documented wire format, and the
 * `fallback` / `cached` combinators composed from them: 5xx, 429 and timeouts move on to the next source, and a
 * transient failure is never cached as "no data".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { CoingeckoClient, CoingeckoMarketSamples, CoingeckoUsdPrice, toFiveMinuteSeries } from './coingecko.js';
import { OrderBookUsdPrice } from './orderbook-price.js';
import { MoralisTokenHolders } from './holders-moralis.js';
import { EthplorerTokenHolders } from './holders-ethplorer.js';
import { GoldRushTokenHolders } from './holders-goldrush.js';
import { DunePools, DuneQueryRows } from './dune-pools.js';
import { fallback, type FallbackStep } from './fallback.js';
import { cached } from './cached.js';
import { ProviderError, SourcesUnavailableError } from './data-source.js';
import { startProviderServer, type ProviderServer, type ProviderReply, type RecordedRequest } from './test-provider-server.js';

const TOKEN = '0x1111111111111111111111111111111111111111' as Address;
const OTHER = '0x2222222222222222222222222222222222222222' as Address;
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' as Address;
const decimals = async (t: Address) => (t === USDC ? 6 : 18);

describe('provider adapters and combinators', () => {
  const servers: ProviderServer[] = [];
  const serve = async (handler: (r: RecordedRequest) => ProviderReply | Promise<ProviderReply>) => {
    const s = await startProviderServer(handler);
    servers.push(s);
    return s;
  };
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  describe('Coingecko', () => {
    let cg: ProviderServer;
    let reply: ProviderReply;
    before(async () => {
      cg = await serve(() => reply);
    });

    it('asks /simple/token_price/{platform} with the PRO key header and reads .usd of the lowercase address', async () => {
      reply = { status: 200, body: { [TOKEN]: { usd: 1.2345 } } };
      const client = new CoingeckoClient({ apiKey: 'cg-secret', baseUrl: cg.url });
      const price = await new CoingeckoUsdPrice(client).lookup({ chainId: 100, token: TOKEN.toUpperCase().replace('0X', '0x') as Address });
      assert.equal(price, 1.2345);
      const req = cg.requests.at(-1)!;
      assert.equal(req.path, '/simple/token_price/xdai');
      assert.equal(req.query.get('contract_addresses'), TOKEN);
      assert.equal(req.query.get('vs_currencies'), 'usd');
      assert.equal(req.headers['x-cg-pro-api-key'], 'cg-secret');
    });

    it('uses the demo header on the demo plan', async () => {
      reply = { status: 200, body: { [TOKEN]: { usd: 2 } } };
      await new CoingeckoClient({ apiKey: 'demo-key', plan: 'demo', baseUrl: cg.url }).tokenUsdPrice(1, TOKEN);
      assert.equal(cg.requests.at(-1)!.headers['x-cg-demo-api-key'], 'demo-key');
      assert.equal(cg.requests.at(-1)!.headers['x-cg-pro-api-key'], undefined);
    });

    it('answers null for an empty object, a missing usd and 404; no request for a chain without a platform', async () => {
      const client = new CoingeckoClient({ apiKey: 'k', baseUrl: cg.url });
      reply = { status: 200, body: {} };
      assert.equal(await client.tokenUsdPrice(1, TOKEN), null);
      reply = { status: 200, body: { [TOKEN]: {} } };
      assert.equal(await client.tokenUsdPrice(1, TOKEN), null);
      reply = { status: 404, body: { error: 'coin not found' } };
      assert.equal(await client.tokenUsdPrice(1, TOKEN), null);
      const before = cg.requests.length;
      assert.equal(await client.tokenUsdPrice(31337, TOKEN), null);
      assert.equal(await client.tokenUsdPrice(11155111, TOKEN), null);
      assert.equal(cg.requests.length, before);
    });

    it('rejects on 429, 5xx, malformed bodies and timeouts (never null)', async () => {
      const client = new CoingeckoClient({ apiKey: 'k', baseUrl: cg.url, timeoutMs: 150 });
      for (const [r, reason] of [
        [{ status: 429, body: { status: { error_code: 429 } } }, 'status'],
        [{ status: 503, raw: '<html>bad gateway</html>' }, 'status'],
        [{ status: 200, raw: 'not json' }, 'malformed'],
        [{ status: 200, body: { [TOKEN]: { usd: 'a lot' } } }, 'malformed'],
        ['hang', 'timeout'],
      ] as const) {
        reply = r;
        await assert.rejects(client.tokenUsdPrice(1, TOKEN), (err: unknown) => {
          assert.ok(err instanceof ProviderError, String(err));
          assert.equal(err.reason, reason);
          assert.doesNotMatch(err.message, /contract_addresses|k\b/);
          return true;
        });
      }
    });

    it('reads market_chart series and rounds them to the 5-minute grid', async () => {
      const t0 = 1_700_000_000_000 - (1_700_000_000_000 % 300_000);
      cg.setHandler((req) => {
        if (req.path === `/coins/ethereum/contract/${TOKEN}/market_chart`) return { status: 200, body: { prices: [[t0 + 1000, 10], [t0 + 299_000, 11], [t0 + 301_000, 12], [t0 + 600_500, 13]], market_caps: [], total_volumes: [] } };
        if (req.path === `/coins/ethereum/contract/${OTHER}/market_chart`) return { status: 200, body: { prices: [[t0, 2], [t0 + 300_000, 2], [t0 + 600_000, 4]] } };
        return { status: 404, body: { error: 'not found' } };
      });
      const client = new CoingeckoClient({ apiKey: 'k', baseUrl: cg.url });
      const samples = await new CoingeckoMarketSamples(client).lookup({ chainId: 1, base: TOKEN, quote: OTHER, fromMs: t0 - 86_400_000 + 600_000, toMs: t0 + 600_000 });
      assert.ok(samples);
      assert.equal(samples.numeraire, 'usd');
      // 299 000 and 301 000 both round to t0 + 300 000: the later one (12) wins
      assert.deepEqual(samples.base, [{ t: t0, price: 10 }, { t: t0 + 300_000, price: 12 }, { t: t0 + 600_000, price: 13 }]);
      assert.deepEqual(samples.quote.map((p) => p.price), [2, 2, 4]);
      const req = cg.requests.find((r) => r.path.endsWith('/market_chart'))!;
      assert.equal(req.query.get('vs_currency'), 'usd');
      assert.equal(req.query.get('days'), '1');
      assert.equal(req.query.get('interval'), null);
      // unknown token → null samples
      assert.equal(await new CoingeckoMarketSamples(client).lookup({ chainId: 1, base: TOKEN, quote: USDC, fromMs: 0, toMs: t0 }), null);
      cg.setHandler(() => reply);
    });

    it('toFiveMinuteSeries drops points far outside the window', () => {
      assert.deepEqual(toFiveMinuteSeries([[0, 1], [1_000_000_000, 2]], 900_000_000, 1_100_000_000), [{ t: 999_900_000, price: 2 }]);
    });
  });

  describe('order book native_price', () => {
    let ob: ProviderServer;
    before(async () => {
      ob = await serve((req) => {
        if (req.path === `/api/v1/token/${USDC}/native_price`) return { status: 200, body: { price: 333333333.3333333 } };
        if (req.path === `/api/v1/token/${TOKEN}/native_price`) return { status: 200, body: { price: 0.002 } };
        if (req.path === `/api/v1/token/${OTHER}/native_price`) return { status: 400, body: { errorType: 'UnsupportedToken', description: 'x' } };
        if (req.path.includes('0x3333')) return { status: 500, body: { errorType: 'InternalServerError', description: '' } };
        return { status: 404, body: { errorType: 'NotFound', description: 'no price' } };
      });
    });

    it('converts native atoms per atom into USD per whole token through the stablecoin', async () => {
      const source = new OrderBookUsdPrice({ baseUrl: `${ob.url}/`, usdStable: USDC, tokenDecimals: decimals });
      const usd = await source.lookup({ chainId: 1, token: TOKEN });
      // 0.002 ETH-atoms per atom × 1e18 atoms = 0.002 ETH ... × (1e18 / (333333333.33 × 1e6)) USD per ETH
      assert.ok(usd !== null && Math.abs(usd - (0.002 * 1e18) / (333333333.3333333 * 1e6)) < 1e-9, String(usd));
      assert.ok(Math.abs(usd! - 6) < 1e-6);
      assert.equal(await source.lookup({ chainId: 1, token: USDC }), 1);
    });

    it('404 and 400 UnsupportedToken are "no price"; 500 rejects', async () => {
      const source = new OrderBookUsdPrice({ baseUrl: ob.url, usdStable: USDC, tokenDecimals: decimals });
      assert.equal(await source.lookup({ chainId: 1, token: OTHER }), null);
      assert.equal(await source.lookup({ chainId: 1, token: '0x4444444444444444444444444444444444444444' }), null);
      await assert.rejects(source.lookup({ chainId: 1, token: '0x3333333333333333333333333333333333333333' }), ProviderError);
    });
  });

  describe('holder APIs', () => {
    it('Moralis: checks the status, sends X-API-Key, reads owner_address/balance, sorts largest first', async () => {
      let status = 200;
      const moralis = await serve(() =>
        status === 200
          ? { status: 200, body: { cursor: null, page: 0, page_size: 100, result: [
              { owner_address: '0xAAaaAAaaaaaAAAaaAAaaaaAAAaaaaAAaAaAaAaAA', balance: '5', balance_formatted: '0.000000000000000005', is_contract: false },
              { owner_address: '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', balance: '123456789012345678901234567890', is_contract: true },
            ] } }
          : { status, body: { message: 'Internal error' } },
      );
      const source = new MoralisTokenHolders({ apiKey: 'm-key', baseUrl: moralis.url });
      const holders = await source.lookup({ chainId: 1, token: TOKEN });
      assert.deepEqual(holders, [
        { address: '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', balance: 123456789012345678901234567890n },
        { address: '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', balance: 5n },
      ]);
      const req = moralis.requests.at(-1)!;
      assert.equal(req.path, `/erc20/${TOKEN}/owners`);
      assert.equal(req.query.get('chain'), 'eth');
      assert.equal(req.query.get('order'), 'DESC');
      assert.equal(req.query.get('limit'), '100');
      assert.equal(req.headers['x-api-key'], 'm-key');
      status = 500;
      await assert.rejects(source.lookup({ chainId: 1, token: TOKEN }), (e: unknown) => e instanceof ProviderError && e.status === 500);
      status = 404;
      assert.equal(await source.lookup({ chainId: 1, token: TOKEN }), null);
      assert.equal(await source.lookup({ chainId: 31337, token: TOKEN }), null);
    });

    it('Ethplorer: uses rawBalance; error 150 (not a token) is no data', async () => {
      let notToken = false;
      const eth = await serve(() =>
        notToken
          ? { status: 400, body: { error: { code: 150, message: 'Address is not a token contract' } } }
          : { status: 200, body: { holders: [{ address: '0xcccccccccccccccccccccccccccccccccccccccc', balance: 1.5e30, share: 50, rawBalance: '1500000000000000000000000000001' }] } },
      );
      const source = new EthplorerTokenHolders({ apiKey: 'e-key', hosts: { 1: eth.url } });
      assert.deepEqual(await source.lookup({ chainId: 1, token: TOKEN }), [{ address: '0xcccccccccccccccccccccccccccccccccccccccc', balance: 1500000000000000000000000000001n }]);
      const req = eth.requests.at(-1)!;
      assert.equal(req.path, `/getTopTokenHolders/${TOKEN}`);
      assert.equal(req.query.get('apiKey'), 'e-key');
      assert.equal(req.query.get('limit'), '100');
      notToken = true;
      assert.equal(await source.lookup({ chainId: 1, token: TOKEN }), null);
    });

    it('GoldRush: Bearer key, data.items, error flag rejects', async () => {
      let failing = false;
      const gr = await serve(() =>
        failing
          ? { status: 200, body: { data: null, error: true, error_message: 'boom', error_code: 500 } }
          : { status: 200, body: { data: { chain_id: 100, items: [{ address: '0xdddddddddddddddddddddddddddddddddddddddd', balance: '7', contract_decimals: 18 }, { address: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', balance: '70' }] }, error: false, error_message: null, error_code: null } },
      );
      const source = new GoldRushTokenHolders({ apiKey: 'g-key', baseUrl: gr.url });
      const holders = await source.lookup({ chainId: 100, token: TOKEN });
      assert.deepEqual(holders?.map((h) => h.balance), [70n, 7n]);
      assert.equal(gr.requests.at(-1)!.path, `/gnosis-mainnet/tokens/${TOKEN}/token_holders_v2/`);
      assert.equal(gr.requests.at(-1)!.headers.authorization, 'Bearer g-key');
      failing = true;
      await assert.rejects(source.lookup({ chainId: 100, token: TOKEN }), ProviderError);
    });

    it('fallback: a failing holder API (5xx, timeout) hands over to the next one', async () => {
      const down = await serve(() => ({ status: 502, raw: 'bad gateway' }));
      const slow = await serve(() => 'hang');
      const up = await serve(() => ({ status: 200, body: { holders: [{ address: '0xcccccccccccccccccccccccccccccccccccccccc', rawBalance: '42' }] } }));
      const steps: FallbackStep[] = [];
      const chain = fallback(
        [new MoralisTokenHolders({ apiKey: 'k', baseUrl: down.url }), new GoldRushTokenHolders({ apiKey: 'k', baseUrl: slow.url, timeoutMs: 150 }), new EthplorerTokenHolders({ apiKey: 'k', hosts: { 1: up.url } })],
        { onStep: (s) => steps.push(s) },
      );
      const answer = await chain.lookupWithSource({ chainId: 1, token: TOKEN });
      assert.deepEqual(answer, { source: 'ethplorer', value: [{ address: '0xcccccccccccccccccccccccccccccccccccccccc', balance: 42n }] });
      assert.deepEqual(steps.map((s) => [s.source, s.outcome]), [['moralis', 'error'], ['goldrush', 'error'], ['ethplorer', 'value']]);
      assert.equal((steps[1]!.error as ProviderError).reason, 'timeout');
    });
  });

  describe('analytics (Dune) pools', () => {
    it('pages the latest query result, skips malformed rows, filters by chain and addresses', async () => {
      const rows = [
        { contract_address: '0x5555555555555555555555555555555555555555', chain_id: 1, project: '"sushiswap"', apr: 12.3456789, fee: 0.3, tvl: 1000, volume: 50 },
        { contract_address: '0x6666666666666666666666666666666666666666', chain_id: 1, project: 'curve', apr: '4.5', fee: 0.04, tvl: 5000, volume: null },
        { contract_address: 'not an address', chain_id: 1, project: 'broken', apr: 1, fee: 1, tvl: 1, volume: 1 },
        { contract_address: '0x7777777777777777777777777777777777777777', chain_id: 100, project: 'honeyswap', apr: 9, fee: 0.3, tvl: 9, volume: 9 },
      ];
      const dune = await serve((req) => {
        const limit = Number(req.query.get('limit'));
        const offset = Number(req.query.get('offset'));
        const page = rows.slice(offset, offset + limit);
        return { status: 200, body: { execution_id: 'E1', query_id: 42, state: 'QUERY_STATE_COMPLETED', is_execution_finished: true, result: { rows: page, metadata: { column_names: Object.keys(rows[0]!), total_row_count: rows.length, row_count: page.length } }, ...(offset + limit < rows.length ? { next_offset: offset + limit } : {}) } };
      });
      let skipped = 0;
      const source = new DunePools({ rows: cached(new DuneQueryRows({ apiKey: 'd-key', queryId: 42, baseUrl: dune.url, pageSize: 2 }), 60_000, 60_000, { key: () => 'rows' }), onSkipped: (n) => (skipped = n) });
      const top = await source.lookup({ chainId: 1, addresses: null, limit: 1000 });
      assert.deepEqual(top?.map((p) => [p.contract_address, p.project, p.apr, p.tvl, p.volume]), [
        ['0x6666666666666666666666666666666666666666', 'curve', 4.5, 5000, null],
        ['0x5555555555555555555555555555555555555555', 'sushiswap', 12.345679, 1000, 50],
      ]);
      assert.equal(skipped, 1);
      assert.deepEqual(dune.requests.map((r) => [r.path, r.query.get('offset')]), [['/api/v1/query/42/results', '0'], ['/api/v1/query/42/results', '2']]);
      assert.equal(dune.requests[0]!.headers['x-dune-api-key'], 'd-key');
      const some = await source.lookup({ chainId: 1, addresses: ['0x5555555555555555555555555555555555555555', '0x9999999999999999999999999999999999999999'], limit: 1000 });
      assert.deepEqual(some?.map((p) => p.contract_address), ['0x5555555555555555555555555555555555555555']);
      assert.equal(dune.requests.length, 2, 'the table is cached');
      assert.equal(await source.lookup({ chainId: 8453, addresses: null, limit: 10 }), null);
    });
  });

  describe('fallback and cached together', () => {
    let cg: ProviderServer;
    let ob: ProviderServer;
    let cgReply: ProviderReply;
    let obReply: ProviderReply;
    before(async () => {
      cg = await serve(() => cgReply);
      ob = await serve((req) => (req.path.includes(USDC) ? { status: 200, body: { price: 333333333.3333333 } } : obReply));
    });

    const build = (now: () => number = Date.now) => {
      const coingecko = cached(new CoingeckoUsdPrice(new CoingeckoClient({ apiKey: 'k', baseUrl: cg.url, timeoutMs: 150 })), 120_000, 1_800_000, { now });
      const orderbook = cached(new OrderBookUsdPrice({ baseUrl: ob.url, usdStable: USDC, tokenDecimals: decimals, timeoutMs: 150 }), 120_000, 1_800_000, { now });
      return { coingecko, orderbook, chain: fallback([coingecko, orderbook]) };
    };

    it('Coingecko 5xx or timeout → the order book answers', async () => {
      for (const failure of [{ status: 503, raw: 'unavailable' }, 'hang'] as ProviderReply[]) {
        cgReply = failure;
        obReply = { status: 200, body: { price: 0.001 } };
        const { chain } = build();
        const answer = await chain.lookupWithSource({ chainId: 1, token: TOKEN });
        assert.equal(answer?.source, 'orderbook');
        assert.ok(Math.abs(answer!.value - 3) < 1e-6, String(answer?.value));
      }
    });

    it('a transient failure is not cached as "no data": the chain rejects, and answers once the provider is back', async () => {
      const { chain } = build();
      cgReply = { status: 503, raw: 'unavailable' };
      obReply = { status: 404, body: { errorType: 'NotFound', description: '' } };
      await assert.rejects(chain.lookup({ chainId: 1, token: TOKEN }), (err: unknown) => {
        assert.ok(err instanceof SourcesUnavailableError);
        assert.deepEqual(err.failures.map((f) => f.source), ['coingecko']);
        return true;
      });
      const before = cg.requests.length;
      cgReply = { status: 200, body: { [TOKEN]: { usd: 7.5 } } };
      assert.equal(await chain.lookup({ chainId: 1, token: TOKEN }), 7.5);
      assert.equal(cg.requests.length, before + 1, 'asked again: the failure was not cached');
      assert.equal(await chain.lookup({ chainId: 1, token: TOKEN }), 7.5);
      assert.equal(cg.requests.length, before + 1, 'the value is cached');
    });

    it('"no data" from every source is null, cached for nullTtl, then asked again', async () => {
      let now = 1_000_000;
      const { chain } = build(() => now);
      cgReply = { status: 200, body: {} };
      obReply = { status: 404, body: { errorType: 'NotFound', description: '' } };
      const cgBefore = cg.count();
      assert.equal(await chain.lookup({ chainId: 1, token: OTHER }), null);
      assert.equal(await chain.lookup({ chainId: 1, token: OTHER }), null);
      assert.equal(cg.count() - cgBefore, 1);
      now += 1_800_001;
      cgReply = { status: 200, body: { [OTHER]: { usd: 0.25 } } };
      assert.equal(await chain.lookup({ chainId: 1, token: OTHER }), 0.25);
      assert.equal(cg.count() - cgBefore, 2);
    });

    it('concurrent lookups of one key share one request', async () => {
      const { coingecko } = build();
      const token = '0x8888888888888888888888888888888888888888' as Address;
      cgReply = { status: 200, body: { [token]: { usd: 3 } } };
      const before = cg.count();
      const answers = await Promise.all(Array.from({ length: 8 }, () => coingecko.lookup({ chainId: 1, token })));
      assert.deepEqual(answers, Array(8).fill(3));
      assert.equal(cg.count() - before, 1);
    });
  });
});
