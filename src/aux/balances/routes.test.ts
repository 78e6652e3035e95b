import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createPublicClient, http, maxUint256, parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../../chain/client.js';
import { erc20ReadAbi } from '../../chain/erc20-abi.js';
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../../chain/faulty-rpc-proxy.js';
import { ChainReader } from '../../chain/reader.js';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { BalanceStream } from './balance-stream.js';
import { registerBalanceRoutes, type BalanceChainContext, type BalanceRoutes, type BalanceRoutesContext } from './routes.js';
import { openSse, type SseClient, type SseEvent } from './test-sse-client.js';

const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const freshUser = (): Address => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address;

interface Entry {
  balance: string;
  allowance: string;
  token: { address: string; decimals: number; symbol: string; name: string };
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

let chain: TestDevnet;
let plain: ReturnType<typeof createPublicClient>;
let proxy: FaultyRpcProxy;
let devnetChain: BalanceChainContext;
let brokenChain: BalanceChainContext;
let token: (symbol: string) => Address;
const servers: HttpServer[] = [];
const clients: SseClient[] = [];
let main: { server: HttpServer; base: string; routes: BalanceRoutes };

async function serve(options: Partial<BalanceRoutesContext> = {}): Promise<{ server: HttpServer; base: string; routes: BalanceRoutes }> {
  const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
  const routes = registerBalanceRoutes(server, { chains: [devnetChain, brokenChain], pingIntervalMs: 200, ...options });
  await server.listen({ port: 0, host: '0.0.0.0' });
  servers.push(server);
  return { server, base: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`, routes };
}

async function sse(url: string, options: { localAddress?: string } = {}): Promise<SseClient> {
  const client = await openSse(url, options);
  clients.push(client);
  return client;
}

const messages = (c: SseClient): SseEvent[] => c.events.filter((e) => e.event === 'message');
const parse = (e: SseEvent): Entry[] => JSON.parse(e.data) as Entry[];



before(async () => {
  chain = await startTestDevnet({ blockTime: 1 });
  plain = createPublicClient({ transport: http(chain.rpcUrl) });
  const bySymbol = new Map(chain.devnet.deployment.tokens.map((t) => [t.symbol, t.address.toLowerCase() as Address]));
  token = (symbol) => bySymbol.get(symbol)!;
  const relayer = chain.devnet.deployment.contracts.vaultRelayer.toLowerCase() as Address;
  const reader = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 100 });
  devnetChain = {
    chainId: 31337,
    reader,
    vaultRelayer: relayer,
    nativeCurrency: { symbol: 'ETH', name: 'Ether', decimals: 18 },
    stream: new BalanceStream({ chainId: 31337, reader, vaultRelayer: relayer }),
  };
  // a second "chain" whose node is unreachable (served as chain 99999)
  proxy = await startFaultyRpcProxy(chain.rpcUrl);
  proxy.down = true;
  const broken = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 1_000, retryCount: 0 }), { pollingIntervalMs: 100 });
  brokenChain = {
    chainId: 99999,
    reader: broken,
    vaultRelayer: relayer,
    nativeCurrency: { symbol: 'ETH', name: 'Ether', decimals: 18 },
    stream: new BalanceStream({ chainId: 99999, reader: broken, vaultRelayer: relayer }),
  };
  main = await serve();
});

after(async () => {
  for (const c of clients) c.close();
  for (const s of servers) await s.close();
  await devnetChain?.stream.close();
  await brokenChain?.stream.close();
  await proxy?.close();
  await chain?.stop();
});

describe('GET /{chainId}/accounts/{user}/balances', () => {
  it('answers real balances, vault-relayer allowances and metadata, native included, in request order, cacheable', async () => {
    const trader = chain.devnet.deployment.accounts[0].address;
    const tokens = [token('USDC'), NATIVE, token('WBTC').toUpperCase().replace('0X', '0x'), token('USDC')];
    const res = await fetch(`${main.base}/31337/accounts/${trader}/balances?tokens=${tokens.join(',')}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=5');
    assert.equal(res.headers.get('x-omitted-tokens'), null);
    const body = (await res.json()) as Entry[];
    assert.deepEqual(
      body.map((e) => e.token),
      [
        { address: token('USDC'), decimals: 6, symbol: 'USDC', name: 'USD Coin' },
        { address: NATIVE.toLowerCase(), decimals: 18, symbol: 'ETH', name: 'Ether' },
        { address: token('WBTC'), decimals: 8, symbol: 'WBTC', name: 'Wrapped BTC' },
      ],
      'de-duplicated, in request order, lowercase addresses',
    );
    for (const [i, symbol] of [[0, 'USDC'], [2, 'WBTC']] as const) {
      assert.equal(body[i].balance, String(await plain.readContract({ address: token(symbol), abi: erc20ReadAbi, functionName: 'balanceOf', args: [trader] })));
      assert.equal(body[i].allowance, String(await plain.readContract({ address: token(symbol), abi: erc20ReadAbi, functionName: 'allowance', args: [trader, devnetChain.vaultRelayer] })));
      assert.notEqual(body[i].balance, '0');
    }
    assert.equal(body[1].balance, String(await plain.getBalance({ address: trader })));
    assert.equal(body[1].allowance, maxUint256.toString());
  });

  it('leaves out addresses that are not ERC-20 tokens and names them in X-Omitted-Tokens', async () => {
    const eoa = chain.devnet.deployment.accounts[1].address;
    const settlement = chain.devnet.deployment.contracts.settlement; // a contract, not a token
    const res = await fetch(`${main.base}/31337/accounts/${freshUser()}/balances?tokens=${eoa},${token('DAI')},${settlement}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-omitted-tokens'), `${eoa.toLowerCase()},${settlement.toLowerCase()}`);
    assert.equal(res.headers.get('access-control-expose-headers'), 'X-Omitted-Tokens');
    const body = (await res.json()) as Entry[];
    assert.deepEqual(body, [{ balance: '0', allowance: '0', token: { address: token('DAI'), decimals: 18, symbol: 'DAI', name: 'Dai Stablecoin' } }]);
  });

  it('400 {message} for missing, empty, malformed or too many tokens and a bad address; 404 for an unknown chain', async () => {
    const user = freshUser();
    const cases: Array<[string, number, RegExp]> = [
      [`/31337/accounts/${user}/balances`, 400, /tokens: at least one token address is required/],
      [`/31337/accounts/${user}/balances?tokens=`, 400, /at least one token address/],
      [`/31337/accounts/${user}/balances?tokens=,%20,`, 400, /at least one token address/],
      [`/31337/accounts/${user}/balances?tokens=${token('USDC')},0x1234`, 400, /invalid token address "0x1234"/],
      [`/31337/accounts/${user}/balances?tokens=${Array.from({ length: 101 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`).join(',')}`, 400, /at most 100/],
      [`/31337/accounts/0xnothex/balances?tokens=${token('USDC')}`, 400, /userAddress/],
      [`/mainnet/accounts/${user}/balances?tokens=${token('USDC')}`, 400, /chainId/],
      [`/1/accounts/${user}/balances?tokens=${token('USDC')}`, 404, /chain 1 is not served here/],
    ];
    for (const [path, status, message] of cases) {
      const res = await fetch(main.base + path);
      assert.equal(res.status, status, path);
      const body = (await res.json()) as { message: string };
      assert.deepEqual(Object.keys(body), ['message'], path);
      assert.match(body.message, message, path);
      assert.equal(res.headers.get('cache-control'), null, 'errors are not cacheable');
    }
  });

  it('500 {message} when the chain cannot be read (and the server keeps serving)', async () => {
    const res = await fetch(`${main.base}/99999/accounts/${freshUser()}/balances?tokens=${token('USDC')}`);
    assert.equal(res.status, 500);
    assert.match(((await res.json()) as { message: string }).message, /could not read balances on chain 99999/);
    const ok = await fetch(`${main.base}/31337/accounts/${freshUser()}/balances?tokens=${token('USDC')}`);
    assert.equal(ok.status, 200);
  });
});

describe('GET /{chainId}/accounts/{user}/balances/sse', () => {
  it('sends exactly the spec headers and the current balances at once, as the REST array', async () => {
    const trader = chain.devnet.deployment.accounts[0].address;
    const query = `tokens=${token('USDC')},${NATIVE},${token('COW')}`;
    const client = await sse(`${main.base}/31337/accounts/${trader}/balances/sse?${query}`);
    assert.equal(client.status, 200);
    assert.equal(client.headers['content-type'], 'text/event-stream');
    assert.equal(client.headers['cache-control'], 'no-cache');
    assert.equal(client.headers.connection, 'keep-alive');
    assert.equal(client.headers['access-control-allow-origin'], '*');
    assert.equal(client.headers['x-accel-buffering'], 'no');
    const first = await client.next((e) => e.event === 'message');
    const rest = (await (await fetch(`${main.base}/31337/accounts/${trader}/balances?${query}`)).json()) as Entry[];
    assert.deepEqual(parse(first), rest);
    client.close();
  });

  it('pushes a new message with the new balance after a mint; blocks without a change send nothing', async () => {
    const user = freshUser();
    const client = await sse(`${main.base}/31337/accounts/${user}/balances/sse?tokens=${token('USDC')},${token('DAI')}`);
    const first = parse(await client.next((e) => e.event === 'message'));
    assert.deepEqual(first.map((e) => e.balance), ['0', '0']);
    await chain.blocks(3);
    assert.equal(messages(client).length, 1, 'unchanged blocks send nothing');

    const amount = await chain.mint(user, 'USDC', '250');
    const update = await client.next((e) => e.event === 'message', 60_000);
    const entries = parse(update);
    assert.equal(entries[0].balance, parseUnits('250', 6).toString());
    assert.equal(entries[0].balance, amount.toString());
    assert.equal(entries[1].balance, '0');
    await chain.blocks(2);
    assert.equal(messages(client).length, 2, 'one message for one change');
    client.close();
  });

  it('two streams of one user share tracking but each receives only its own tokens; tracking ends when both leave', async () => {
    const user = freshUser();
    const one = await sse(`${main.base}/31337/accounts/${user}/balances/sse?tokens=${token('USDC')},${token('DAI')}`);
    const two = await sse(`${main.base}/31337/accounts/${user}/balances/sse?tokens=${token('DAI')},${token('WBTC')}`);
    await one.next((e) => e.event === 'message');
    await two.next((e) => e.event === 'message');
    assert.deepEqual(new Set(devnetChain.stream.trackedTokens(user)), new Set([token('USDC'), token('DAI'), token('WBTC')]));

    await chain.mint(user, 'DAI', '1');
    const [m1, m2] = await Promise.all([one.next((e) => e.event === 'message'), two.next((e) => e.event === 'message')]);
    assert.deepEqual(parse(m1).map((e) => [e.token.symbol, e.balance]), [['USDC', '0'], ['DAI', parseUnits('1', 18).toString()]]);
    assert.deepEqual(parse(m2).map((e) => [e.token.symbol, e.balance]), [['DAI', parseUnits('1', 18).toString()], ['WBTC', '0']]);

    await chain.mint(user, 'USDC', '2');
    await one.next((e) => e.event === 'message');
    await chain.blocks(2);
    assert.equal(messages(two).length, 2, 'the USDC change is not sent to the stream that does not watch USDC');

    one.close();
    await until('one stream left', () => devnetChain.stream.trackedTokens(user)?.length === 2);
    two.close();
    await until('tracking gone', () => devnetChain.stream.trackedTokens(user) === null, 2_000);
    await until('connections cleaned up', () => main.routes.connections === 0 && main.routes.limiter.connections === 0, 2_000);
  });

  it('pings at the configured interval with a timestamp', async () => {
    const client = await sse(`${main.base}/31337/accounts/${freshUser()}/balances/sse?tokens=${token('USDC')}`);
    await until('three pings', () => client.events.filter((e) => e.event === 'ping').length >= 3, 60_000);
    const stamps = client.events.filter((e) => e.event === 'ping').map((p) => Date.parse((JSON.parse(p.data) as { timestamp: string }).timestamp));
    for (const t of stamps) assert.ok(!Number.isNaN(t), 'each ping carries an ISO timestamp');
    for (let i = 1; i < stamps.length; i++) assert.ok(stamps[i] > stamps[i - 1], `ping timestamps move forward (${stamps.join(', ')})`);
    client.close();
  });

  it('a client that stops reading does not hold up the others', async () => {
    const user = freshUser();
    const paused = await sse(`${main.base}/31337/accounts/${user}/balances/sse?tokens=${token('COW')}`);
    const active = await sse(`${main.base}/31337/accounts/${user}/balances/sse?tokens=${token('COW')}`);
    await paused.next((e) => e.event === 'message');
    await active.next((e) => e.event === 'message');
    paused.pause();
    const amount = await chain.mint(user, 'COW', '9');
    const update = await active.next((e) => e.event === 'message', 60_000);
    assert.equal(parse(update)[0].balance, amount.toString());
    assert.equal(messages(paused).length, 1, 'the active client got the change while the paused one still has only its first message');
    paused.resume();
    const late = await paused.next((e) => e.event === 'message', 5_000);
    assert.equal(parse(late)[0].balance, amount.toString(), 'the paused client gets the latest state when it reads again');
    paused.close();
    active.close();
  });

  it('errors are answered as {message} before any stream starts', async () => {
    const user = freshUser();
    for (const [path, status] of [
      [`/31337/accounts/${user}/balances/sse`, 400],
      [`/31337/accounts/${user}/balances/sse?tokens=0xbad`, 400],
      [`/5/accounts/${user}/balances/sse?tokens=${token('USDC')}`, 404],
      [`/99999/accounts/${user}/balances/sse?tokens=${token('USDC')}`, 500],
    ] as const) {
      const client = await sse(main.base + path);
      assert.equal(client.status, status, path);
      assert.match(String(client.headers['content-type']), /application\/json/);
      assert.equal(typeof (client.body as { message: string }).message, 'string');
    }
    assert.equal(brokenChain.stream.stats().users, 0, 'nothing stays registered after a failed start');
  });

  it('caps: per IP → 429, per server → 503, both {message} with Retry-After; a closed stream frees its slot at once', async () => {
    const capped = await serve({ caps: { maxConnectionsPerIp: 2, maxConnections: 3 } });
    const url = `${capped.base}/31337/accounts/${freshUser()}/balances/sse?tokens=${token('USDC')}`;
    const a1 = await sse(url, { localAddress: '127.0.0.1' });
    const a2 = await sse(url, { localAddress: '127.0.0.1' });
    assert.deepEqual([a1.status, a2.status], [200, 200]);
    const a3 = await sse(url, { localAddress: '127.0.0.1' });
    assert.equal(a3.status, 429);
    assert.match((a3.body as { message: string }).message, /at most 2 concurrent streams per IP/);
    assert.ok(Number(a3.headers['retry-after']) > 0);

    const b1 = await sse(url, { localAddress: '127.0.0.2' });
    assert.equal(b1.status, 200);
    const b2 = await sse(url, { localAddress: '127.0.0.2' });
    assert.equal(b2.status, 503);
    assert.match((b2.body as { message: string }).message, /at capacity \(3 concurrent streams\)/);

    a1.close();
    await until('slot freed', () => capped.routes.limiter.connections === 2, 2_000);
    const b3 = await sse(url, { localAddress: '127.0.0.2' });
    assert.equal(b3.status, 200);
    for (const c of [a2, b1, b3]) c.close();
    await until('all slots freed', () => capped.routes.limiter.connections === 0, 2_000);
  });

  it('caps the distinct (user, token) pairs one client watches across its streams (429)', async () => {
    const capped = await serve({ caps: { maxPairsPerIp: 3 } });
    const [u1, u2] = [freshUser(), freshUser()];
    const url = (user: string) => `${capped.base}/31337/accounts/${user}/balances/sse?tokens=${token('USDC')},${token('DAI')}`;
    const first = await sse(url(u1), { localAddress: '127.0.0.1' });
    assert.equal(first.status, 200);
    const same = await sse(url(u1), { localAddress: '127.0.0.1' });
    assert.equal(same.status, 200, 'the same pairs again add nothing');
    const more = await sse(url(u2), { localAddress: '127.0.0.1' });
    assert.equal(more.status, 429);
    assert.match((more.body as { message: string }).message, /at most 3 distinct \(user, token\) pairs/);
    const other = await sse(url(u2), { localAddress: '127.0.0.2' });
    assert.equal(other.status, 200, 'another client has its own budget');
    for (const c of [first, same, other]) c.close();
    await until('all slots freed', () => capped.routes.limiter.connections === 0, 2_000);
  });

  it('graceful shutdown: aborting the signal ends every stream and refuses new ones; server.close() is not held up', { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    const s = await serve({ signal: controller.signal });
    const user = freshUser();
    const c1 = await sse(`${s.base}/31337/accounts/${user}/balances/sse?tokens=${token('USDC')}`);
    const c2 = await sse(`${s.base}/31337/accounts/${freshUser()}/balances/sse?tokens=${token('DAI')}`);
    await c1.next((e) => e.event === 'message');
    controller.abort();
    await Promise.all([c1.closed, c2.closed]);
    assert.equal(s.routes.connections, 0);
    await until('user untracked', () => devnetChain.stream.trackedTokens(user) === null, 2_000);
    const refused = await sse(`${s.base}/31337/accounts/${user}/balances/sse?tokens=${token('USDC')}`);
    assert.equal(refused.status, 503);

    const t = await serve();
    const c3 = await sse(`${t.base}/31337/accounts/${freshUser()}/balances/sse?tokens=${token('USDC')}`);
    await c3.next((e) => e.event === 'message');
    // close() ends open streams itself instead of waiting for clients to leave (they never would: a hang fails
    // the test by its timeout)
    await t.server.close();
    await c3.closed;
  });
});
