/**
 * The market routes on a real node: the devnet with 2 hours of replayed history (5-minute blocks of swaps),
 * indexed into PGlite by the node's own indexer loop, served over real HTTP by a Fastify built with
 * buildHttpServer + registerMarketRoutes. External providers are local HTTP servers speaking Coingecko's,
 * a CoW order book's, Moralis' and Dune's wire formats (the only stand-ins). Expected values are computed in
 * the test from chain reads and the indexed rows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createWalletClient, erc20Abi, http, parseAbi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from '../../../test/fixtures/app.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { chainDefinition } from '../../chain/client.js';
import { loadDevnetArtifacts } from '../../chain/devnet/artifacts.js';
import { DEVNET_POOL_SPECS } from '../../chain/devnet/deploy.js';
import type { DevnetDescription } from '../../chain/devnet/index.js';
import type { ChainNetwork } from '../../chain/network.js';
import { toHex } from '../../db/codec.js';
import { startProviderServer, type ProviderServer } from '../../providers/test-provider-server.js';
import { buildMarketServices, registerMarketRoutes, type MarketBuildOptions, type MarketServicesConfig } from './index.js';

const PAIR_ABI = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)', 'function token0() view returns (address)']);
const PLATFORM = 'batchbook-devnet';
const lower = (a: string) => a.toLowerCase() as Address;

interface Served {
  server: HttpServer;
  base: string;
}

describe('market routes on the devnet with history', () => {
  let app: TestApp;
  let network: ChainNetwork;
  let d: DevnetDescription;
  let tok: Record<string, Address>;
  let main: Served;
  const extra: Served[] = [];
  const providers: ProviderServer[] = [];
  /** fresh ERC-20s without any pool: T1..T4 */
  const fresh: Address[] = [];
  // what the local providers answer, per lowercase token
  const cgPrices = new Map<string, number | 'fail'>();
  const cgCharts = new Map<string, Array<[number, number]>>();
  const obPrices = new Map<string, number | 'fail'>();
  let cg: ProviderServer;
  let ob: ProviderServer;
  let moralis: ProviderServer;

  async function serve(options: MarketBuildOptions, config: Partial<MarketServicesConfig> = {}): Promise<Served> {
    const services = buildMarketServices(network, app.database.db, { coingeckoApiKey: null, analyticsApiKey: null, externalQuoteUrl: null, outboundTimeoutMs: 5_000, ...config }, options);
    const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    registerMarketRoutes(server, { chains: new Map([[network.chainId, { network, ...services }]]) });
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address();
    return { server, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
  }

  async function call(served: Served, path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetch(served.base + path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  }
  const get = (path: string) => call(main, path);
  const post = (served: Served, path: string, body: unknown, raw?: string) =>
    call(served, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ?? JSON.stringify(body) });

  async function reserves(pool: Address): Promise<Map<Address, bigint>> {
    const [[r0, r1], token0] = await Promise.all([
      network.client.readContract({ address: pool, abi: PAIR_ABI, functionName: 'getReserves' }),
      network.client.readContract({ address: pool, abi: PAIR_ABI, functionName: 'token0' }),
    ]);
    const pair = d.pools.find((p) => lower(p.address) === lower(pool))!;
    assert.equal(lower(token0), lower(pair.token0));
    return new Map([[lower(pair.token0), r0], [lower(pair.token1), r1]]);
  }
  const poolOf = (a: string, b: string) => lower(d.pools.find((p) => [lower(p.token0), lower(p.token1)].sort().join() === [tok[a], tok[b]].sort().join())!.address);

  before(async () => {
    app = await startTestApp({ DEVNET_HISTORY_HOURS: '2' });
    network = app.networks[0]!;
    d = app.devnet!.describe();
    tok = Object.fromEntries(d.tokens.map((t) => [t.symbol, lower(t.address)]));

    // fresh tokens without pools (for the provider fallbacks)
    const deployer = privateKeyToAccount(d.accounts[0]!.privateKey);
    const wallet = createWalletClient({ account: deployer, chain: chainDefinition(31337, d.rpcUrl), transport: http(d.rpcUrl) });
    const artifact = loadDevnetArtifacts().devnetToken;
    for (let i = 1; i <= 4; i++) {
      const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: [`Fresh ${i}`, `FR${i}`, 18] });
      const receipt = await network.client.waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 100 });
      fresh.push(lower(receipt.contractAddress!));
    }

    // wait until the node's indexer has caught up with the head
    const head = Number(await network.reader.blockNumber());
    for (let i = 0; ; i++) {
      const cp = await app.database.db.selectFrom('indexer_checkpoints').select('block_number').where('chain_id', '=', network.chainId).executeTakeFirst();
      if (cp && Number(cp.block_number) >= head) break;
      assert.ok(i < 300, 'the indexer did not catch up');
      await new Promise((r) => setTimeout(r, 100));
    }

    cg = await startProviderServer((req) => {
      const chart = /^\/coins\/([^/]+)\/contract\/(0x[0-9a-f]{40})\/market_chart$/.exec(req.path);
      if (chart) {
        const series = chart[1] === PLATFORM ? cgCharts.get(chart[2]!) : undefined;
        return series ? { status: 200, body: { prices: series, market_caps: [], total_volumes: [] } } : { status: 404, body: { error: 'coin not found' } };
      }
      if (req.path !== `/simple/token_price/${PLATFORM}` || req.headers['x-cg-pro-api-key'] !== 'cg-key') return { status: 401, body: { error: 'unauthorised' } };
      const token = req.query.get('contract_addresses')!;
      const price = cgPrices.get(token);
      if (price === 'fail') return { status: 503, raw: 'Service Unavailable' };
      return { status: 200, body: price === undefined ? {} : { [token]: { usd: price } } };
    });
    ob = await startProviderServer((req) => {
      const m = /^\/api\/v1\/token\/(0x[0-9a-f]{40})\/native_price$/.exec(req.path);
      const price = m ? obPrices.get(m[1]!) : undefined;
      if (price === 'fail') return { status: 500, body: { errorType: 'InternalServerError', description: '' } };
      return price === undefined ? { status: 404, body: { errorType: 'NotFound', description: 'no price' } } : { status: 200, body: { price } };
    });
    moralis = await startProviderServer((req) =>
      req.path === `/erc20/${fresh[0]}/owners` && req.headers['x-api-key'] === 'm-key'
        ? { status: 200, body: { cursor: null, page: 0, page_size: 100, result: [{ owner_address: d.accounts[1]!.address, balance: '10' }, { owner_address: d.accounts[0]!.address, balance: '2000' }] } }
        : { status: 404, body: { message: 'not found' } },
    );
    providers.push(cg, ob, moralis);
    main = await serve(
      {
        providers: {
          coingecko: { baseUrl: cg.url, platforms: { 31337: PLATFORM } },
          orderBookUrl: ob.url,
          moralis: { apiKey: 'm-key', baseUrl: moralis.url, chains: { 31337: 'devnet' } },
          timeoutMs: 500,
        },
      },
      { coingeckoApiKey: 'cg-key' },
    );
  });

  after(async () => {
    for (const s of [main, ...extra]) await s?.server.close();
    await Promise.all(providers.map((p) => p.close()));
    await app?.stop();
  });

  describe('GET /{chainId}/tokens/{token}/usdPrice', () => {
    it('prices WETH from the WETH/USDC reserves (≈ 3000), by chain id and by network name', async () => {
      const r = await reserves(poolOf('WETH', 'USDC'));
      const expected = Number(r.get(tok.USDC)!) / 1e6 / (Number(r.get(tok.WETH)!) / 1e18);
      const byId = await get(`/31337/tokens/${d.tokens[0]!.address}/usdPrice`);
      assert.equal(byId.status, 200);
      assert.ok(byId.body.price > 2700 && byId.body.price < 3300, String(byId.body.price));
      assert.ok(Math.abs(byId.body.price / expected - 1) < 1e-9, `${byId.body.price} vs ${expected}`);
      for (const name of ['devnet', 'DEVNET']) {
        const byName = await get(`/${name}/tokens/${tok.WETH}/usdPrice`);
        assert.equal(byName.status, 200);
        assert.equal(byName.body.price, byId.body.price);
      }
      assert.equal(byId.headers.get('cache-control'), 'public, max-age=60');
      assert.match(byId.headers.get('content-type') ?? '', /application\/json/);
    });

    it('USDC (the reference stablecoin) is 1, DAI ≈ 1, WBTC ≈ 60000, COW ≈ 0.5', async () => {
      assert.deepEqual((await get(`/devnet/tokens/${tok.USDC}/usdPrice`)).body, { price: 1 });
      const expect = { DAI: 1, WBTC: 60_000, COW: 0.5 } as const;
      for (const [symbol, anchor] of Object.entries(expect)) {
        const { status, body } = await get(`/devnet/tokens/${tok[symbol]}/usdPrice`);
        assert.equal(status, 200);
        assert.ok(Math.abs(body.price / anchor - 1) < 0.1, `${symbol} ${body.price}`);
      }
    });

    it('"-" and 0xEeee…EEeE price the native asset as WETH', async () => {
      const weth = (await get(`/devnet/tokens/${tok.WETH}/usdPrice`)).body.price;
      assert.equal((await get('/devnet/tokens/-/usdPrice')).body.price, weth);
      assert.equal((await get('/31337/tokens/0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE/usdPrice')).body.price, weth);
    });

    it('400 for a malformed address, 404 for an unknown chain or a non-token, each with {message}', async () => {
      for (const bad of ['0x1234', 'abc', `0x${'g'.repeat(40)}`, `${tok.WETH}00`, '--']) {
        const r = await get(`/devnet/tokens/${bad}/usdPrice`);
        assert.equal(r.status, 400, bad);
        assert.match(r.body.message, /tokenAddress/);
      }
      for (const chain of ['1', 'mainnet', 'nowhere', '999999999']) {
        const r = await get(`/${chain}/tokens/${tok.WETH}/usdPrice`);
        assert.equal(r.status, 404, chain);
        assert.match(r.body.message, /not served/);
      }
      const eoa = await get(`/devnet/tokens/${d.accounts[2]!.address}/usdPrice`);
      assert.equal(eoa.status, 404);
      assert.match(eoa.body.message, /not an ERC-20/);
      assert.equal(eoa.headers.get('cache-control'), null);
    });

    it('a token without pools falls back to Coingecko, then to the order book', async () => {
      const [t1, t2] = fresh as [Address, Address];
      cgPrices.set(t1, 1.25);
      assert.deepEqual((await get(`/devnet/tokens/${t1}/usdPrice`)).body, { price: 1.25 });

      cgPrices.set(t2, 'fail');
      obPrices.set(tok.USDC, 1e12 / 3000); // native atoms per USDC atom: $3000 per ETH
      obPrices.set(t2, 0.002); // native atoms per token atom
      const r = await get(`/devnet/tokens/${t2}/usdPrice`);
      assert.equal(r.status, 200);
      assert.ok(Math.abs(r.body.price - 0.002 * 3000) < 1e-9, String(r.body.price));
    });

    it('a transient failure answers 500 and is not cached as "no price"; "no price" is 404 and cached', async () => {
      const [, , t3, t4] = fresh as [Address, Address, Address, Address];
      cgPrices.set(t3, 'fail');
      obPrices.set(t3, 'fail');
      const failed = await get(`/devnet/tokens/${t3}/usdPrice`);
      assert.equal(failed.status, 500);
      assert.match(failed.body.message, /temporarily unavailable.*coingecko.*503/);
      cgPrices.set(t3, 2.5);
      assert.deepEqual((await get(`/devnet/tokens/${t3}/usdPrice`)).body, { price: 2.5 });

      const before = cg.count('/simple') + ob.count('/api');
      const missing = await get(`/devnet/tokens/${t4}/usdPrice`);
      assert.equal(missing.status, 404);
      assert.match(missing.body.message, /no USD price/);
      assert.equal(cg.count('/simple') + ob.count('/api') - before, 3, 'coingecko once, the order book for the token and USDC');
      assert.equal((await get(`/devnet/tokens/${t4}/usdPrice`)).status, 404);
      assert.equal(cg.count('/simple') + ob.count('/api') - before, 3, '"no price" is cached');
    });
  });

  describe('GET /{chainId}/tokens/{token}/topHolders', () => {
    it('USDC holders = the chain: balances equal balanceOf, largest first, summing to totalSupply', async () => {
      const { status, body, headers } = await get(`/devnet/tokens/${d.tokens[1]!.address}/topHolders`);
      assert.equal(status, 200);
      assert.equal(headers.get('cache-control'), 'public, max-age=60');
      assert.ok(body.length > 5 && body.length < 100);
      const balances = await Promise.all(body.map((h: { address: Address }) => network.client.readContract({ address: tok.USDC, abi: erc20Abi, functionName: 'balanceOf', args: [h.address] })));
      body.forEach((h: { address: string; balance: string }, i: number) => {
        assert.match(h.address, /^0x[0-9a-f]{40}$/);
        assert.equal(h.balance, balances[i]!.toString(), h.address);
        if (i > 0) assert.ok(BigInt(body[i - 1].balance) >= BigInt(h.balance), 'sorted');
      });
      const supply = await network.client.readContract({ address: tok.USDC, abi: erc20Abi, functionName: 'totalSupply' });
      assert.equal(body.reduce((s: bigint, h: { balance: string }) => s + BigInt(h.balance), 0n), supply);
      const holders = new Set(body.map((h: { address: string }) => h.address));
      for (const a of d.accounts.filter((x) => x.role === 'trader' || x.role === 'market-bot')) assert.ok(holders.has(lower(a.address)), a.role);
      assert.ok(holders.has(lower(d.contracts.smartWallet)));
      for (const pair of [['WETH', 'USDC'], ['USDC', 'DAI'], ['WBTC', 'USDC']]) assert.ok(holders.has(poolOf(pair[0]!, pair[1]!)), pair.join('/'));
    });

    it('limit, WETH (deposits count as mints), 400 for a bad limit or address, 404 for a non-token', async () => {
      const three = await get(`/devnet/tokens/${tok.WETH}/topHolders?limit=3`);
      assert.equal(three.status, 200);
      assert.equal(three.body.length, 3);
      const all = await get(`/devnet/tokens/${tok.WETH}/topHolders`);
      assert.deepEqual(three.body, all.body.slice(0, 3));
      const wethSupply = await network.client.readContract({ address: tok.WETH, abi: erc20Abi, functionName: 'totalSupply' });
      assert.equal(all.body.reduce((s: bigint, h: { balance: string }) => s + BigInt(h.balance), 0n), wethSupply);
      for (const q of ['limit=0', 'limit=101', 'limit=x']) {
        const r = await get(`/devnet/tokens/${tok.WETH}/topHolders?${q}`);
        assert.equal(r.status, 400, q);
        assert.match(r.body.message, /limit/);
      }
      assert.equal((await get('/devnet/tokens/0x12/topHolders')).status, 400);
      assert.equal((await get('/devnet/tokens/-/topHolders')).status, 400);
      const eoa = await get(`/devnet/tokens/${d.accounts[2]!.address}/topHolders`);
      assert.equal(eoa.status, 404);
      assert.match(eoa.body.message, /not an ERC-20/);
    });

    it('an untracked ERC-20 is answered by the holder API (Moralis), status checked', async () => {
      const r = await get(`/devnet/tokens/${fresh[0]}/topHolders`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, [{ address: lower(d.accounts[0]!.address), balance: '2000' }, { address: lower(d.accounts[1]!.address), balance: '10' }]);
      const none = await get(`/devnet/tokens/${fresh[1]}/topHolders`);
      assert.equal(none.status, 404);
      assert.match(none.body.message, /no holder data/);
    });
  });

  describe('GET /{chainId}/markets/{base}-{quote}/slippageTolerance', () => {
    const slippage = (a: string, b: string, query = '') => get(`/devnet/markets/${a}-${b}/slippageTolerance${query}`);
    const details = async (a: string, b: string, query = '') => {
      const r = await get(`/devnet/markets/${a}-${b}/volatilityDetails${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };

    it('answers 0..10000 bps with Cache-Control 120 s for every seeded pair (both directions)', async () => {
      for (const spec of DEVNET_POOL_SPECS) {
        for (const [a, b] of [[spec.a, spec.b], [spec.b, spec.a]]) {
          const r = await slippage(tok[a]!, tok[b]!);
          assert.equal(r.status, 200, `${a}-${b}: ${JSON.stringify(r.body)}`);
          assert.ok(Number.isInteger(r.body.slippageBps) && r.body.slippageBps >= 0 && r.body.slippageBps <= 10_000, `${a}-${b} ${r.body.slippageBps}`);
          assert.equal(r.headers.get('cache-control'), 'public, max-age=120');
        }
      }
      const viaWeth = await slippage(tok.COW!, tok.DAI!);
      assert.equal(viaWeth.status, 200);
    });

    it('is ceil(σ(base/quote) ÷ current ratio × 10000) over the indexed 5-minute samples (checked by hand)', async () => {
      const det = await details(tok.WETH!, tok.USDC!);
      assert.equal(det.source, 'indexed-syncs');
      assert.equal(det.numeraire, tok.WETH);
      // USDC in WETH: the last sample is the current reserve ratio
      const r = await reserves(poolOf('WETH', 'USDC'));
      const last = det.quoteToken.prices.at(-1);
      assert.ok(Math.abs(last.price / (Number(r.get(tok.WETH)!) / 1e18 / (Number(r.get(tok.USDC)!) / 1e6)) - 1) < 1e-12);
      // 2 h of history every 5 minutes → about 25 points, spaced 300 s
      assert.ok(det.pair.points >= 20 && det.pair.points <= 30, String(det.pair.points));
      const quote = new Map(det.quoteToken.prices.map((p: { t: number; price: number }) => [p.t, p.price]));
      const ratios = det.baseToken.prices.filter((p: { t: number }) => quote.has(p.t)).map((p: { t: number; price: number }) => p.price / (quote.get(p.t) as number));
      const mean = ratios.reduce((s: number, x: number) => s + x, 0) / ratios.length;
      const sigma = Math.sqrt(ratios.reduce((s: number, x: number) => s + (x - mean) ** 2, 0) / ratios.length);
      const v = sigma / ratios.at(-1);
      assert.ok(v > 0);
      const { body } = await slippage(tok.WETH!, tok.USDC!);
      assert.equal(body.slippageBps, Math.ceil(v * 10_000 - 1e-9));
      assert.equal(det.slippageBps, body.slippageBps);
    });

    it('grows with expirationTimeInSeconds as √(clamp(T, 300, 86400)/300)', async () => {
      const v = (await details(tok.WETH!, tok.USDC!)).pair.volatilityInTokens;
      const at = async (t: number) => (await slippage(tok.WETH!, tok.USDC!, `?expirationTimeInSeconds=${t}`)).body.slippageBps;
      const plain = (await slippage(tok.WETH!, tok.USDC!)).body.slippageBps;
      assert.equal(await at(60), plain);
      assert.equal(await at(300), plain);
      assert.equal(await at(3600), Math.ceil(v * Math.sqrt(12) * 10_000 - 1e-9));
      assert.ok((await at(3600)) > plain);
      assert.equal(await at(10 ** 7), Math.ceil(v * Math.sqrt(288) * 10_000 - 1e-9));
    });

    it('adds the price impact of the amount against current reserves (best route, by hand); partially fillable halves it', async () => {
      const v = (await details(tok.WETH!, tok.USDC!)).pair.volatilityInTokens;
      const x = 1000n * 10n ** 18n; // 1000 WETH against a pool of ≈ 3300 WETH
      const direct = await reserves(poolOf('WETH', 'USDC'));
      const wethDai = await reserves(poolOf('WETH', 'DAI'));
      const daiUsdc = await reserves(poolOf('USDC', 'DAI'));
      const hop = (amount: bigint, rin: bigint, rout: bigint) => ({ impact: Number(amount * 997n) / Number(rin * 1000n + amount * 997n), out: (amount * 997n * rout) / (rin * 1000n + amount * 997n) });
      const d1 = hop(x, direct.get(tok.WETH!)!, direct.get(tok.USDC!)!).impact;
      const v1 = hop(x, wethDai.get(tok.WETH!)!, wethDai.get(tok.DAI!)!);
      const v2 = hop(v1.out, daiUsdc.get(tok.DAI!)!, daiUsdc.get(tok.USDC!)!);
      const impact = Math.min(d1, 1 - (1 - v1.impact) * (1 - v2.impact));
      const det = await details(tok.WETH!, tok.USDC!, `?orderKind=sell&sellAmount=${x}`);
      assert.equal(det.adjustments.amountUsed, 'sellAmount');
      assert.ok(Math.abs(det.adjustments.priceImpact - impact) < 1e-9, `${det.adjustments.priceImpact} vs ${impact}`);
      const big = (await slippage(tok.WETH!, tok.USDC!, `?orderKind=sell&sellAmount=${x}`)).body.slippageBps;
      assert.equal(big, Math.ceil((v + impact) * 10_000 - 1e-9));
      const small = (await slippage(tok.WETH!, tok.USDC!, `?sellAmount=${10n ** 15n}`)).body.slippageBps;
      assert.ok(big > small + 1000, `${big} vs ${small}`);
      const partial = (await slippage(tok.WETH!, tok.USDC!, `?orderKind=sell&sellAmount=${x}&partiallyFillable=true`)).body.slippageBps;
      assert.equal(partial, Math.ceil(((v + impact) / 2) * 10_000 - 1e-9));
      // buy orders use buyAmount (quote atoms); the sell amount is then ignored for the impact
      const buy = await details(tok.WETH!, tok.USDC!, `?orderKind=buy&buyAmount=${1_000_000n * 10n ** 6n}&sellAmount=1`);
      assert.equal(buy.adjustments.amountUsed, 'buyAmount');
      assert.ok(buy.adjustments.priceImpact > 0.05);
    });

    it('adds half the fee share of a small order', async () => {
      const plain = (await slippage(tok.WETH!, tok.USDC!, `?sellAmount=${10n ** 15n}`)).body.slippageBps;
      const withFee = (await slippage(tok.WETH!, tok.USDC!, `?sellAmount=${10n ** 15n}&feeAmount=${10n ** 14n}`)).body.slippageBps;
      assert.ok(withFee - plain >= 499 && withFee - plain <= 501, `${plain} → ${withFee}`);
    });

    it('400 naming the field for bad parameters and addresses', async () => {
      const cases: Array<[string, RegExp]> = [
        ['?orderKind=limit', /orderKind/],
        ['?sellAmount=1.5', /sellAmount/],
        ['?sellAmount=-1', /sellAmount/],
        ['?sellAmount=0', /sellAmount/],
        [`?buyAmount=${2n ** 256n}`, /buyAmount: exceeds uint256/],
        ['?feeAmount=abc', /feeAmount/],
        ['?partiallyFillable=maybe', /partiallyFillable/],
        ['?expirationTimeInSeconds=-5', /expirationTimeInSeconds/],
        ['?expirationTimeInSeconds=soon', /expirationTimeInSeconds/],
      ];
      for (const [query, field] of cases) {
        const r = await slippage(tok.WETH!, tok.USDC!, query);
        assert.equal(r.status, 400, query);
        assert.match(r.body.message, field, query);
      }
      assert.match((await slippage('0x123', tok.USDC!)).body.message, /baseTokenAddress/);
      assert.match((await slippage(tok.WETH!, 'nope')).body.message, /quoteTokenAddress/);
      const same = await slippage(tok.WETH!, tok.WETH!.toUpperCase().replace('0X', '0x'));
      assert.equal(same.status, 400);
    });

    it('404 without market data (no pool, unknown to Coingecko); Coingecko samples when the indexer has none', async () => {
      const none = await slippage(tok.WETH!, d.accounts[2]!.address);
      assert.equal(none.status, 404);
      assert.match(none.body.message, /no market data/);
      assert.equal((await slippage(fresh[3]!, tok.USDC!)).status, 404);

      // fresh[2] vs USDC from Coingecko's market_chart (USD), checked by hand
      const now = Date.now();
      const step = 300_000;
      const t0 = Math.round((now - 6 * step) / step) * step;
      const base: Array<[number, number]> = [10, 10.4, 9.8, 10.1, 10.6, 10].map((p, i) => [t0 + i * step + 1_000, p]);
      const quote: Array<[number, number]> = [1, 1, 1.01, 1, 0.99, 1].map((p, i) => [t0 + i * step - 2_000, p]);
      cgCharts.set(fresh[2]!, base);
      cgCharts.set(tok.USDC!, quote);
      const ratios = base.map(([, p], i) => p / quote[i]![1]);
      const mean = ratios.reduce((s, x) => s + x, 0) / ratios.length;
      const sigma = Math.sqrt(ratios.reduce((s, x) => s + (x - mean) ** 2, 0) / ratios.length);
      const r = await slippage(fresh[2]!, tok.USDC!);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.slippageBps, Math.ceil((sigma / ratios.at(-1)!) * 10_000 - 1e-9));
      assert.equal((await details(fresh[2]!, tok.USDC!)).source, 'coingecko');
    });

    it('volatilityDetails is served but hidden from the OpenAPI document', async () => {
      const doc = await get('/docs/json');
      assert.equal(doc.status, 200);
      const paths = Object.keys(doc.body.paths);
      assert.ok(paths.includes('/{chainId}/markets/{baseTokenAddress}-{quoteTokenAddress}/slippageTolerance'), paths.join(' '));
      assert.ok(!paths.some((p) => p.includes('volatilityDetails')));
      for (const p of ['/{chainId}/tokens/{tokenAddress}/usdPrice', '/{chainId}/tokens/{tokenAddress}/topHolders', '/{chainId}/yield/pools', '/{chainId}/yield/pools-average-apr']) assert.ok(paths.includes(p), p);
    });
  });

  describe('yield', () => {
    /** TVL, volume and APR of every seeded pool computed here from chain reserves, raw swap rows and the usdPrice answers. */
    async function byHand(): Promise<Map<Address, { tvl: number; volume: number; apr: number }>> {
      const price = async (t: Address) => (await get(`/devnet/tokens/${t}/usdPrice`)).body.price as number;
      const refs = new Map<Address, number>([[tok.WETH!, await price(tok.WETH!)], [tok.USDC!, await price(tok.USDC!)], [tok.DAI!, await price(tok.DAI!)]]);
      const decimals = new Map(d.tokens.map((t) => [lower(t.address), t.decimals]));
      const since = new Date(Date.now() - 86_400_000);
      const swaps = await app.database.db.selectFrom('amm_swaps').select(['pool', 'amount0_in', 'amount1_in', 'block_timestamp']).where('chain_id', '=', 31337).execute();
      const out = new Map<Address, { tvl: number; volume: number; apr: number }>();
      for (const pool of d.pools) {
        const address = lower(pool.address);
        const [t0, t1] = [lower(pool.token0), lower(pool.token1)];
        const r = await reserves(address);
        const x0 = Number(r.get(t0)!) / 10 ** decimals.get(t0)!;
        const x1 = Number(r.get(t1)!) / 10 ** decimals.get(t1)!;
        let p0 = refs.get(t0);
        let p1 = refs.get(t1);
        if (p0 === undefined) p0 = (p1! * x1) / x0;
        if (p1 === undefined) p1 = (p0 * x0) / x1;
        let in0 = 0n;
        let in1 = 0n;
        for (const s of swaps) {
          if (toHex(s.pool) !== address || new Date(s.block_timestamp) <= since) continue;
          in0 += BigInt(s.amount0_in);
          in1 += BigInt(s.amount1_in);
        }
        const tvl = x0 * p0 + x1 * p1;
        const volume = (Number(in0) / 10 ** decimals.get(t0)!) * p0 + (Number(in1) / 10 ** decimals.get(t1)!) * p1;
        out.set(address, { tvl, volume, apr: Math.round(((volume * 0.003 * 365) / tvl) * 100 * 1e6) / 1e6 });
      }
      return out;
    }

    it('POST [] → the 6 pools, top TVL first, TVL ≈ seeded liquidity, volume from replayed swaps, APR by hand', async () => {
      const r = await post(main, '/devnet/yield/pools', []);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 6);
      const expected = await byHand();
      for (let i = 0; i < r.body.length; i++) {
        const pool = r.body[i];
        assert.deepEqual(Object.keys(pool).sort(), ['apr', 'chain_id', 'contract_address', 'fee', 'project', 'tvl', 'volume']);
        assert.equal(pool.chain_id, 31337);
        assert.equal(pool.project, 'uniswap-v2');
        assert.equal(pool.fee, 0.3);
        if (i > 0) assert.ok(r.body[i - 1].tvl >= pool.tvl, 'sorted by TVL');
        const spec = DEVNET_POOL_SPECS.find((s) => poolOf(s.a, s.b) === pool.contract_address)!;
        assert.ok(Math.abs(pool.tvl / (2 * spec.depthUsd) - 1) < 0.1, `${spec.a}/${spec.b} tvl ${pool.tvl}`);
        assert.ok(pool.volume > 0, `${spec.a}/${spec.b} volume`);
        const hand = expected.get(pool.contract_address)!;
        assert.ok(Math.abs(pool.tvl / hand.tvl - 1) < 1e-9, `${pool.tvl} vs ${hand.tvl}`);
        assert.ok(Math.abs(pool.volume / hand.volume - 1) < 1e-9, `${pool.volume} vs ${hand.volume}`);
        assert.ok(Math.abs(pool.apr - hand.apr) <= 2e-6, `${pool.apr} vs ${hand.apr}`);
        assert.equal(pool.apr, Math.round(pool.apr * 1e6) / 1e6, 'rounded to 6 places');
      }
    });

    it('given addresses: in the order asked, duplicates and unknown pools dropped; 1000 accepted, 1001 refused', async () => {
      const [a, b] = [lower(d.pools[3]!.address), lower(d.pools[0]!.address)];
      const unknown = '0x000000000000000000000000000000000000dead';
      const r = await post(main, '/devnet/yield/pools', [a.toUpperCase().replace('0X', '0x'), unknown, b, a]);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.map((p: { contract_address: string }) => p.contract_address), [a, b]);

      const many = Array.from({ length: 1000 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
      many[500] = b;
      const pretty = JSON.stringify(many, null, 2);
      assert.ok(pretty.length > 44_000, String(pretty.length));
      const ok = await post(main, '/devnet/yield/pools', null, pretty);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual(ok.body.map((p: { contract_address: string }) => p.contract_address), [b]);
      const tooMany = await post(main, '/devnet/yield/pools', [...many, unknown]);
      assert.equal(tooMany.status, 400);
      assert.match(tooMany.body.message, /1000/);
      const bad = await post(main, '/devnet/yield/pools', ['0x1234']);
      assert.equal(bad.status, 400);
      assert.equal((await post(main, '/devnet/yield/pools', { pools: [] })).status, 400);
    });

    it('GET pools-average-apr: the mean APR per project, Cache-Control 6 h', async () => {
      const pools = (await post(main, '/devnet/yield/pools', [])).body as Array<{ apr: number }>;
      const r = await get('/devnet/yield/pools-average-apr');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('cache-control'), 'public, max-age=21600');
      assert.deepEqual(Object.keys(r.body), ['uniswap-v2']);
      assert.ok(Math.abs(r.body['uniswap-v2'] - pools.reduce((s, p) => s + p.apr, 0) / pools.length) <= 1e-6);
      assert.equal((await get('/mainnet/yield/pools-average-apr')).status, 404);
    });

    it('an analytics source (Dune) adds its pools; its failure does not abort the answer', async () => {
      let failing = true;
      const competitor = '0x5555555555555555555555555555555555555555';
      const dune = await startProviderServer((req) => {
        if (failing) return { status: 500, body: { error: 'internal error' } };
        assert.equal(req.headers['x-dune-api-key'], 'dune-key');
        const rows = [
          { contract_address: competitor, chain_id: 31337, project: 'sushiswap', apr: 25.5, fee: 0.3, tvl: 1e12, volume: 1e9 },
          { contract_address: '0x6666666666666666666666666666666666666666', chain_id: 1, project: 'curve', apr: 3, fee: 0.04, tvl: 5e9, volume: 1e6 },
        ];
        return { status: 200, body: { execution_id: 'E', query_id: 7, state: 'QUERY_STATE_COMPLETED', result: { rows, metadata: { total_row_count: rows.length } } } };
      });
      providers.push(dune);
      const served = await serve({ providers: { analytics: { yieldQueryId: 7, baseUrl: dune.url }, timeoutMs: 500 } }, { analyticsApiKey: 'dune-key' });
      extra.push(served);
      const degraded = await post(served, '/devnet/yield/pools', []);
      assert.equal(degraded.status, 200);
      assert.equal(degraded.body.length, 6);
      failing = false;
      const merged = await post(served, '/devnet/yield/pools', []);
      assert.equal(merged.body.length, 7);
      assert.equal(merged.body[0].contract_address, competitor, 'largest TVL first');
      const asked = await post(served, '/devnet/yield/pools', [competitor, lower(d.pools[0]!.address)]);
      assert.deepEqual(asked.body.map((p: { project: string }) => p.project), ['sushiswap', 'uniswap-v2']);
      const average = await call(served, '/devnet/yield/pools-average-apr');
      assert.deepEqual(Object.keys(average.body), ['sushiswap', 'uniswap-v2']);
      assert.equal(average.body.sushiswap, 25.5);
    });
  });
});
