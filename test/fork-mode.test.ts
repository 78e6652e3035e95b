/**
 * Issue 20: fork mode, checked from the outside. A local chain-1 upstream that looks like mainnet at mainnet's
 * addresses (fixtures/mainnet-upstream.ts) sits behind a logging JSON-RPC proxy whose URL carries a fake API key;
 * the node is the real entry point (`npm start`) in a child process with only FORK_URL (and a DATA_DIR) set.
 * Checked: identity (chain 1, /mainnet/api/v1, /api/v1, /1/...), GET /devnet, the contracts as found with the
 * settling account allow-listed on the fork only, tokens and real pairs, funded dev accounts, the faucet, prices and
 * quotes against the pools and the router, the official SDK's TradingSdk on chain 1 unmodified, that only reads
 * reached the upstream and that it is unchanged, that the URL appears nowhere, and the offline restart.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrderBookApi, OrderKind, OrderStatus, TradingSdk, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, createWalletClient, http, maxUint256, parseAbi, parseEther, parseUnits, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mainnet } from 'viem/chains';
import { ensureBuilt, startNode, type NodeProcess } from './fixtures/real-chain.js';
import { MAINNET, UPSTREAM_SOLVER, startMainnetUpstream, type MainnetUpstream } from './fixtures/mainnet-upstream.js';
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../src/chain/faulty-rpc-proxy.js';
import { findFreePort, startAnvil, type AnvilProcess } from '../src/chain/devnet/anvil-process.js';
import { waitFor } from './fixtures/wait-for.js';
import { startBatchbook, type Batchbook } from '../src/index.js';

const SECRET = 'sk-F0RK-5ECRET-0123456789abcdef';
const SETTLEMENT: Address = '0x9008D19f58AAbD9eD0D60971565AA8510560ab41';
const RELAYER: Address = '0xC92E8bdf79f0507f65a392b0ab4667716BFE0110';
const AUTHENTICATOR: Address = '0x2c4c28DDBdAc9C5E7055b4C863b72eA0149D8aFE';
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)', 'function allowance(address, address) view returns (uint256)']);
const auth = parseAbi(['function isSolver(address) view returns (bool)', 'function manager() view returns (address)']);
const pairAbi = parseAbi(['function getReserves() view returns (uint112, uint112, uint32)']);
const routerAbi = parseAbi(['function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)']);

interface DevnetInfo {
  chainId: number;
  rpcUrl: string;
  contracts: Record<string, Address>;
  tokens: Array<{ symbol: string; address: Address; decimals: number }>;
  pools: Array<{ address: Address; token0: Address; token1: Address }>;
  accounts: Array<{ address: Address; privateKey: Hex; role: string }>;
  fork?: { chainId: number; block: number };
}

/** The methods anvil may send to the upstream while forking: reads only. */
const READ_METHODS = new Set([
  'eth_chainId', 'eth_blockNumber', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBalance', 'eth_getTransactionCount',
  'eth_getCode', 'eth_getStorageAt', 'eth_getAccountInfo', 'eth_getProof', 'net_version', 'eth_gasPrice', 'eth_feeHistory', 'eth_getTransactionByHash', 'eth_getTransactionReceipt', 'eth_getLogs', 'eth_call',
]);

describe('fork mode: FORK_URL at a local chain-1 upstream', () => {
  let upstream: MainnetUpstream;
  let proxy: FaultyRpcProxy;
  let node: NodeProcess | null = null;
  let dataDir: string;
  let forkUrl: string;
  let info: DevnetInfo;
  let fork: PublicClient;
  let up: PublicClient;
  let reservesBefore: readonly [bigint, bigint, number];
  /** the fork block's timestamp, ms */
  let forkTime = 0;
  const get = async <T>(path: string): Promise<{ status: number; body: T; text: string }> => {
    const res = await fetch(`${node!.base}${path}`);
    const text = await res.text();
    let body: T | null = null;
    try {
      body = JSON.parse(text) as T;
    } catch {
      body = null;
    }
    return { status: res.status, body: body as T, text };
  };

  before(async () => {
    await ensureBuilt();
    upstream = await startMainnetUpstream({ blockTime: 1 });
    proxy = await startFaultyRpcProxy(upstream.rpcUrl);
    forkUrl = `${proxy.url}/v3/${SECRET}?apikey=${SECRET}`;
    dataDir = mkdtempSync(join(tmpdir(), 'bb-fork-'));
    up = createPublicClient({ transport: http(upstream.rpcUrl) }) as PublicClient;
    reservesBefore = await up.readContract({ address: MAINNET.usdcWethPair, abi: pairAbi, functionName: 'getReserves' });
    node = await startNode({ FORK_URL: forkUrl, FORK_TOKENS: `${upstream.extraToken},${UPSTREAM_SOLVER}`, DATA_DIR: dataDir, DEVNET_PORT: '0', DEVNET_BLOCK_TIME: '1' });
    await waitFor('the fork node to be ready', async () => (await fetch(`${node!.base}/readyz`)).status === 200, 120_000, 200);
    info = (await get<DevnetInfo>('/devnet')).body;
    fork = createPublicClient({ transport: http(info.rpcUrl) }) as PublicClient;
  });

  after(async () => {
    if (process.env.FORK_TEST_LOG) (await import('node:fs')).writeFileSync(process.env.FORK_TEST_LOG, node?.output() ?? '');
    await node?.stop();
    await upstream?.stop();
    await proxy?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the upstream chain id and serves the order book as mainnet, at /api/v1 and the auxiliary API under /1', async () => {
    assert.equal(await fork.getChainId(), 1);
    assert.match(node!.output(), /fork of mainnet \(chain 1\).*replayed there/);
    const version = await get<string>('/mainnet/api/v1/version');
    assert.equal(version.status, 200);
    const native = await get<{ price: number }>(`/mainnet/api/v1/token/${MAINNET.usdc}/native_price`);
    assert.equal(native.status, 200, native.text);
    const viaDefault = await get<{ price: number }>(`/api/v1/token/${MAINNET.usdc}/native_price`);
    assert.equal(viaDefault.status, 200);
    const usd = await get<{ price: number }>(`/1/tokens/${MAINNET.weth}/usdPrice`);
    assert.equal(usd.status, 200, usd.text);
    assert.equal((await get('/devnet/api/v1/version')).status, 404);
  });

  it('GET /devnet keeps its shape: chain 1, the fork\'s own RPC, canonical contracts, listed tokens and fork {chainId, block}', async () => {
    assert.equal(info.chainId, 1);
    assert.notEqual(new URL(info.rpcUrl).port, new URL(proxy.url).port);
    assert.deepEqual(
      { settlement: info.contracts.settlement, vaultRelayer: info.contracts.vaultRelayer, authenticator: info.contracts.authenticator, weth: info.contracts.weth },
      { settlement: SETTLEMENT, vaultRelayer: RELAYER, authenticator: AUTHENTICATOR, weth: MAINNET.weth },
    );
    assert.deepEqual(info.tokens.map((t) => [t.symbol, t.address, t.decimals]), [['WETH', MAINNET.weth, 18], ['USDC', MAINNET.usdc, 6], ['DAI', MAINNET.dai, 18], ['COW', upstream.extraToken, 18]]);
    assert.match(node!.output(), new RegExp(`FORK_TOKENS ${UPSTREAM_SOLVER.toLowerCase()} is not an ERC-20 on chain 1`));
    assert.ok(info.pools.some((p) => p.address === MAINNET.usdcWethPair), 'the real USDC/WETH pair is listed');
    assert.equal(info.pools.length, 3);
    assert.equal(info.fork?.chainId, 1);
    const forkBlock = BigInt(info.fork!.block);
    const [onFork, onUpstream] = await Promise.all([fork.getBlock({ blockNumber: forkBlock }), up.getBlock({ blockNumber: forkBlock })]);
    assert.equal(onFork.hash, onUpstream.hash);
    assert.deepEqual(info.accounts.slice(0, 2).map((a) => a.address), ['0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8']);
    assert.deepEqual(info.accounts.slice(0, 2).map((a) => a.role), ['trader', 'trader']);
  });

  it('never shows the upstream URL: not in /devnet, /healthz, /readyz nor the logs', async () => {
    for (const path of ['/devnet', '/healthz', '/readyz']) {
      const { text } = await get(path);
      assert.ok(!text.includes(SECRET) && !text.includes(proxy.url), `${path} shows the upstream URL`);
    }
    assert.ok(!node!.output().includes(SECRET), 'the logs show the API key');
    assert.ok(!node!.output().includes(new URL(proxy.url).host), 'the logs show the upstream host');
  });

  it('uses the CoW contracts as found and allow-lists the settling account on the fork only (impersonating the contract manager)', async () => {
    const solver = info.accounts.find((a) => a.role === 'solver')!.address;
    const read = (c: PublicClient, fn: 'isSolver', who: Address) => c.readContract({ address: AUTHENTICATOR, abi: auth, functionName: fn, args: [who] });
    assert.equal(await read(fork, 'isSolver', solver), true);
    assert.equal(await read(up, 'isSolver', solver), false);
    assert.equal(await read(fork, 'isSolver', UPSTREAM_SOLVER), true, 'the upstream\'s solvers stay');
    assert.equal(await fork.readContract({ address: AUTHENTICATOR, abi: auth, functionName: 'manager' }), upstream.manager);
    assert.equal(await fork.getCode({ address: SETTLEMENT }), await up.getCode({ address: SETTLEMENT }));
  });

  it('funds accounts[0] and [1] with native coin and every listed token, approved to the vault relayer', async () => {
    for (const account of info.accounts.slice(0, 2)) {
      assert.ok((await fork.getBalance({ address: account.address })) >= parseEther('1000'));
      for (const token of info.tokens) {
        const [balance, allowance] = await Promise.all([
          fork.readContract({ address: token.address, abi: erc20, functionName: 'balanceOf', args: [account.address] }),
          fork.readContract({ address: token.address, abi: erc20, functionName: 'allowance', args: [account.address, RELAYER] }),
        ]);
        assert.ok(balance > 0n, `${token.symbol} balance of ${account.address}`);
        assert.equal(allowance, maxUint256);
      }
    }
  });

  it('POST /devnet/faucet mints DAI (Vyper-order balances) and USDC (behind a proxy) on the fork', async () => {
    const recipient: Address = '0x00000000000000000000000000000000000fa0ce';
    for (const [symbol, token, amount] of [['DAI', MAINNET.dai, parseUnits('123', 18)], ['USDC', MAINNET.usdc, parseUnits('45.5', 6)]] as const) {
      const res = await fetch(`${node!.base}/devnet/faucet`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address: recipient, token: symbol, amount: symbol === 'DAI' ? '123' : '45.5' }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      await waitFor(`${symbol} from the faucet`, async () =>
        (await fork.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [recipient] })) === amount, 30_000, 200);
      assert.equal(await up.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [recipient] }), 0n);
    }
  });

  it('prices and quotes follow the real pools: usdPrice and native price within a few percent, a 1 WETH quote near getAmountsOut', async () => {
    const [r0, r1] = await fork.readContract({ address: MAINNET.usdcWethPair, abi: pairAbi, functionName: 'getReserves' });
    const poolUsdPerWeth = (Number(r0) / 1e6) / (Number(r1) / 1e18); // token0 USDC, token1 WETH
    const usd = (await get<{ price: number }>(`/1/tokens/${MAINNET.weth}/usdPrice`)).body.price;
    assert.ok(Math.abs(usd / poolUsdPerWeth - 1) < 0.03, `usdPrice ${usd} vs pool ${poolUsdPerWeth}`);
    const native = (await get<{ price: number }>(`/mainnet/api/v1/token/${MAINNET.usdc}/native_price`)).body.price;
    // native price: wei of ETH per base unit of USDC
    const poolNative = Number(r1) / Number(r0);
    assert.ok(Math.abs(native / poolNative - 1) < 0.03, `native price ${native} vs pool ${poolNative}`);
    const trader = info.accounts[0]!.address;
    const res = await fetch(`${node!.base}/mainnet/api/v1/quote`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sellToken: MAINNET.weth, buyToken: MAINNET.usdc, from: trader, kind: 'sell', sellAmountBeforeFee: parseEther('1').toString() }),
    });
    const quote = (await res.json()) as { quote: { buyAmount: string; feeAmount: string } };
    assert.equal(res.status, 200, JSON.stringify(quote));
    const [, routerOut] = await fork.readContract({ address: MAINNET.router, abi: routerAbi, functionName: 'getAmountsOut', args: [parseEther('1'), [MAINNET.weth, MAINNET.usdc]] });
    const ratio = Number(BigInt(quote.quote.buyAmount)) / Number(routerOut!);
    assert.ok(ratio > 0.97 && ratio < 1.03, `quote ${quote.quote.buyAmount} vs router ${routerOut}`);
  });

  it('slippage and volatility answer from the first start with the pairs\' history before the fork block', async () => {
    // the fork block's time, kept for the offline restart (where the blocks before the fork are gone)
    forkTime = Number((await fork.getBlock({ blockNumber: BigInt(info.fork!.block) })).timestamp) * 1000;
    await checkMarketHistory(node!.base, forkTime);
  });

  it('the official TradingSdk on chain 1, unmodified but for the order-book URL, sells 0.1 WETH for USDC and the trade settles on the fork', async () => {
    await sdkSwap(node!.base, info, fork);
  });

  it('yield values the real pairs at their reserves', async () => {
    const [r0] = await fork.readContract({ address: MAINNET.usdcWethPair, abi: pairAbi, functionName: 'getReserves' });
    // valued once the indexer has the pair's reserves: its first Sync after the fork block, from a swap of a dev account
    const swapper = info.accounts[1]!.address;
    const wallet = createWalletClient({ chain: mainnet, transport: http(info.rpcUrl) });
    await fork.waitForTransactionReceipt({ hash: await wallet.writeContract({ account: swapper, address: MAINNET.weth, abi: parseAbi(['function approve(address, uint256) returns (bool)']), functionName: 'approve', args: [MAINNET.router, maxUint256] }) });
    const swap = await wallet.writeContract({
      account: swapper, address: MAINNET.router, functionName: 'swapExactTokensForTokens', args: [parseEther('0.01'), 0n, [MAINNET.weth, MAINNET.usdc], swapper, maxUint256],
      abi: parseAbi(['function swapExactTokensForTokens(uint256, uint256, address[], address, uint256) returns (uint256[])']),
    });
    assert.equal((await fork.waitForTransactionReceipt({ hash: swap })).status, 'success');
    const tvl = await waitFor('the pair valued by the yield API', async () => {
      const res = await fetch(`${node!.base}/1/yield/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([MAINNET.usdcWethPair]) });
      const pools = (await res.json()) as Array<{ tvl: number | null }>;
      assert.equal(res.status, 200, JSON.stringify(pools));
      assert.equal(pools.length, 1);
      return pools[0]!.tvl;
    }, 30_000, 250);
    const poolTvl = 2 * (Number(r0) / 1e6);
    assert.ok(Math.abs(tvl / poolTvl - 1) < 0.05, `yield TVL ${tvl} vs pool ${poolTvl}`);
  });

  it('Trade-a-CoW and the dashboard work on the fork: two dev-account orders settle against each other', async () => {
    const networks = (await get<Array<{ name: string; chainId: number; devnet: boolean }>>('/dashboard/api/networks')).body;
    assert.ok(networks.some((n) => n.name === 'mainnet' && n.chainId === 1));
    const res = await fetch(`${node!.base}/dashboard/api/mainnet/trade-a-cow`, { method: 'POST' });
    const placed = (await res.json()) as { orders: Array<{ uid: string }> };
    assert.equal(res.status, 201, JSON.stringify(placed));
    for (const { uid } of placed.orders) {
      await waitFor(`Trade-a-CoW order ${uid} to be fulfilled`, async () => (await get<{ status: string }>(`/mainnet/api/v1/orders/${uid}`)).body.status === 'fulfilled', 90_000, 500);
    }
  });

  it('sent only reads to the upstream, which is unchanged', async () => {
    const methods = Object.keys(proxy.counts.methods);
    assert.ok(methods.length > 0);
    for (const m of methods) assert.ok(READ_METHODS.has(m), `${m} reached the upstream`);
    const solver = info.accounts.find((a) => a.role === 'solver')!.address;
    assert.equal(await up.readContract({ address: AUTHENTICATOR, abi: auth, functionName: 'isSolver', args: [solver] }), false);
    assert.equal(await up.readContract({ address: MAINNET.weth, abi: erc20, functionName: 'balanceOf', args: [info.accounts[0]!.address] }), 0n);
    assert.deepEqual(await up.readContract({ address: MAINNET.usdcWethPair, abi: pairAbi, functionName: 'getReserves' }), reservesBefore);
    const before = await up.getBlockNumber();
    await waitFor('the upstream to keep its own pace', async () => (await up.getBlockNumber()) > before, 10_000, 100);
  });

  it('restarts offline from the same DATA_DIR: the same fork, orders and balances, height not going back, and new SDK orders settle', async () => {
    const trader = info.accounts[0]!.address;
    const balancesBefore = await Promise.all(info.tokens.map((t) => fork.readContract({ address: t.address, abi: erc20, functionName: 'balanceOf', args: [trader] })));
    const orders = (await get<Array<{ uid: string; status: string }>>(`/mainnet/api/v1/account/${trader}/orders`)).body;
    assert.ok(orders.length >= 1);
    const heightBefore = await fork.getBlockNumber();
    await node!.stop();
    await waitFor('the fork to stop with the node', async () => (await fork.getBlockNumber().catch(() => null)) === null, 15_000, 100);
    await upstream.stop();
    proxy.down = true;
    const requestsBefore = proxy.counts.http;

    node = await startNode({ FORK_URL: forkUrl, DATA_DIR: dataDir, DEVNET_PORT: '0', DEVNET_BLOCK_TIME: '1' });
    await waitFor('the restarted fork node to be ready', async () => (await fetch(`${node!.base}/readyz`)).status === 200, 120_000, 200);
    const again = (await get<DevnetInfo>('/devnet')).body;
    assert.deepEqual(again.fork, info.fork);
    assert.deepEqual(again.tokens, info.tokens);
    fork = createPublicClient({ transport: http(again.rpcUrl) }) as PublicClient;
    assert.equal(await fork.getChainId(), 1);
    assert.ok((await fork.getBlockNumber()) >= heightBefore, 'the height went back');
    const balancesAfter = await Promise.all(info.tokens.map((t) => fork.readContract({ address: t.address, abi: erc20, functionName: 'balanceOf', args: [trader] })));
    assert.deepEqual(balancesAfter, balancesBefore);
    const ordersAfter = (await get<Array<{ uid: string; status: string }>>(`/mainnet/api/v1/account/${trader}/orders`)).body;
    assert.deepEqual(ordersAfter.map((o) => [o.uid, o.status]), orders.map((o) => [o.uid, o.status]));
    const trades = (await get<Array<{ orderUid: string }>>(`/mainnet/api/v1/trades?owner=${trader}`)).body;
    assert.ok(trades.length >= 1);
    await sdkSwap(node!.base, again, fork);
    // the history read on the first start is in the database: no upstream needed
    await checkMarketHistory(node!.base, forkTime);
    assert.equal(proxy.counts.http, requestsBefore, 'the restarted node reached for the upstream');
    assert.ok(!node!.output().includes(SECRET));
  });
});

interface VolatilityDetailsBody {
  source: string;
  quoteToken: { prices: Array<{ t: number; price: number }> };
  pair: { points: number; sigma: number; volatilityInTokens: number };
  slippageBps: number;
}

/**
 * WETH→USDC slippage and volatility answer 200 from the indexed Syncs, with prices from before the fork block (the
 * upstream's swaps of history, 20 minutes apart) that differ between buckets: history the indexer, starting after the
 * fork block, cannot have seen.
 */
async function checkMarketHistory(base: string, forkTime: number): Promise<void> {
  const market = `${base}/1/markets/${MAINNET.weth}-${MAINNET.usdc}`;
  const details = await waitFor('volatility details of WETH-USDC', async () => {
    const res = await fetch(`${market}/volatilityDetails`);
    return res.status === 200 ? ((await res.json()) as VolatilityDetailsBody) : null;
  }, 60_000, 250);
  assert.equal(details.source, 'indexed-syncs');
  const before = details.quoteToken.prices.filter((p) => p.t < forkTime);
  const distinct = new Set(before.map((p) => p.price));
  assert.ok(distinct.size >= 3, `prices before the fork block: ${JSON.stringify(before.slice(0, 20))}`);
  // sane: USDC near 1/3000 WETH, a few percent of volatility at most
  for (const p of before) assert.ok(Math.abs(p.price * 3000 - 1) < 0.1, `USDC at ${p.price} WETH`);
  assert.ok(details.pair.points >= 3 && details.pair.sigma > 0 && details.pair.volatilityInTokens > 0 && details.pair.volatilityInTokens < 0.05, JSON.stringify(details.pair));
  const res = await fetch(`${market}/slippageTolerance`);
  const body = (await res.json()) as { slippageBps: number };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.ok(Number.isInteger(body.slippageBps) && body.slippageBps > 0 && body.slippageBps <= 10_000, JSON.stringify(body));
}

/** TradingSdk exactly as the issue writes it: chain 1, an app code, a signer, and the order book's base URL. */
async function sdkSwap(base: string, info: DevnetInfo, fork: PublicClient): Promise<void> {
  const account = privateKeyToAccount(info.accounts[0]!.privateKey);
  const provider = createPublicClient({ chain: mainnet, transport: http(info.rpcUrl) });
  setGlobalAdapter(new ViemAdapter({ provider: provider as never, signer: account as never }) as never);
  const orderBookApi = new OrderBookApi({ chainId: 1, baseUrls: { 1: `${base}/mainnet` } as never });
  const sdk = new TradingSdk({ chainId: 1, appCode: 'batchbook-fork-test', signer: account as never }, { orderBookApi });
  const read = (token: Address) => fork.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [account.address] });
  const [wethBefore, usdcBefore] = await Promise.all([read(MAINNET.weth), read(MAINNET.usdc)]);
  const { orderId } = await sdk.postSwapOrder({
    kind: OrderKind.SELL,
    sellToken: MAINNET.weth,
    sellTokenDecimals: 18,
    buyToken: MAINNET.usdc,
    buyTokenDecimals: 6,
    amount: parseEther('0.1').toString(),
  });
  const order = await waitFor('the SDK order to be fulfilled', async () => {
    const o = await orderBookApi.getOrder(orderId);
    return o.status === OrderStatus.FULFILLED ? o : null;
  }, 90_000, 500);
  const [trade] = await orderBookApi.getTrades({ orderUid: orderId });
  assert.ok(trade?.txHash, 'the trade names its settlement transaction');
  const receipt = await fork.getTransactionReceipt({ hash: trade.txHash as Hex });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.to?.toLowerCase(), SETTLEMENT.toLowerCase());
  const [wethAfter, usdcAfter] = await Promise.all([read(MAINNET.weth), read(MAINNET.usdc)]);
  assert.equal(wethBefore - wethAfter, BigInt(order.executedSellAmount));
  assert.equal(usdcAfter - usdcBefore, BigInt(order.executedBuyAmount));
  const rest = await fetch(`${base}/1/accounts/${account.address}/balances?tokens=${MAINNET.weth},${MAINNET.usdc}`);
  const entries = (await rest.json()) as Array<{ token?: string; address?: string; balance: string }>;
  assert.deepEqual(entries.map((e) => BigInt(e.balance)), [wethAfter, usdcAfter]);
}

describe('fork mode: a chain batchbook does not know, without CoW contracts', () => {
  let upstream: AnvilProcess;
  let node: NodeProcess | null = null;
  let dataDir: string;

  before(async () => {
    await ensureBuilt();
    upstream = await startAnvil({ port: await findFreePort(), chainId: 777, noMining: false });
    await fetch(upstream.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x5'] }) });
    dataDir = mkdtempSync(join(tmpdir(), 'bb-fork777-'));
    node = await startNode({ FORK_URL: upstream.rpcUrl, DATA_DIR: dataDir, DEVNET_PORT: '0', DEVNET_BLOCK_TIME: '1' });
    await waitFor('the fork node to be ready', async () => (await fetch(`${node!.base}/readyz`)).status === 200, 120_000, 200);
  });

  after(async () => {
    await node?.stop();
    await upstream?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is served under a name derived from the chain id, says so at start, and deploys the CoW contracts on the fork only', async () => {
    assert.match(node!.output(), /chain 777 is not a network batchbook knows; its order book is served as \/chain_777\/api\/v1/);
    assert.match(node!.output(), /no CoW Protocol contracts at the canonical addresses; deployed them on the fork/);
    assert.equal((await fetch(`${node!.base}/chain_777/api/v1/version`)).status, 200);
    assert.equal((await fetch(`${node!.base}/api/v1/version`)).status, 200);
    const info = (await (await fetch(`${node!.base}/devnet`)).json()) as DevnetInfo;
    assert.equal(info.chainId, 777);
    assert.equal(info.fork?.chainId, 777);
    const fork = createPublicClient({ transport: http(info.rpcUrl) });
    const up = createPublicClient({ transport: http(upstream.rpcUrl) });
    assert.ok(((await fork.getCode({ address: SETTLEMENT })) ?? '0x').length > 2);
    assert.equal((await up.getCode({ address: SETTLEMENT })) ?? '0x', '0x');
    const solver = info.accounts.find((a) => a.role === 'solver')!.address;
    assert.equal(await fork.readContract({ address: AUTHENTICATOR, abi: auth, functionName: 'isSolver', args: [solver] }), true);
    // the wrapped native token deployed on the fork is listed and funded
    assert.equal(info.tokens[0]!.address, info.contracts.weth);
    assert.ok((await fork.readContract({ address: info.contracts.weth!, abi: erc20, functionName: 'balanceOf', args: [info.accounts[0]!.address] })) > 0n);
  });
});

describe('fork mode: an unreachable upstream', () => {
  it('stops the start with an error that names FORK_URL and never shows it', async () => {
    const port = await findFreePort();
    const secret = 'sk-UNREACHABLE-9876543210';
    const dataDir = mkdtempSync(join(tmpdir(), 'bb-fork-down-'));
    try {
      await ensureBuilt();
      await assert.rejects(startNode({ FORK_URL: `http://127.0.0.1:${port}/v3/${secret}`, DATA_DIR: dataDir, DEVNET_PORT: '0' }), (err: unknown) => {
        const message = (err as Error).message;
        return /the node exited early/.test(message) && /the upstream \(FORK_URL\) did not answer eth_chainId/.test(message) && !message.includes(secret) && !message.includes(`127.0.0.1:${port}`);
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('fork mode through the testing kit: startBatchbook({fork})', () => {
  let upstream: MainnetUpstream;
  let bb: Batchbook | null = null;

  before(async () => {
    await ensureBuilt();
    upstream = await startMainnetUpstream({ blockTime: 1 });
  });
  after(async () => {
    await bb?.stop();
    await upstream?.stop();
  });

  it('passes the URL and block through and hands back the fork\'s chain, order-book URL and fork block', async () => {
    const block = await upstream.blockNumber();
    bb = await startBatchbook({ fork: { url: upstream.rpcUrl, block } });
    assert.equal(bb.chainId, 1);
    assert.deepEqual(bb.fork, { chainId: 1, block });
    assert.equal(bb.orderBookUrl, `${bb.url}/mainnet`);
    assert.equal((await fetch(`${bb.orderBookUrl}/api/v1/version`)).status, 200);
    assert.equal(bb.contracts.weth, MAINNET.weth);
  });
});
