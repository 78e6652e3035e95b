/**
 * Batch auctions that really settle (issue 6), on the real devnet: a whole node (startTestApp, which runs the
 * event indexer) plus the auction loop started beside it (following the indexer's checkpoint), and the
 * auction/competition routes on a server of their own.
 * Orders are signed with viem and posted to the node; settlements go through the real GPv2Settlement from the
 * devnet's allow-listed solver account. Where two orders must meet in one auction, interval mining is paused
 * while they are placed (anvil evm_setIntervalMining 0), so the next block sees both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createWalletClient, decodeFunctionData, encodeFunctionData, http, maxUint256, parseAbi, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { buildHttpServer, type HttpServer } from '../src/http/server.js';
import { registerAuctionRoutes } from '../src/auction/auction-routes.js';
import { AuctionStore } from '../src/auction/auction-store.js';
import { CompetitionStore } from '../src/auction/competition-store.js';
import type { RunningAuctionLoop } from '../src/auction/auction-loop.js';
import { wireAuctionLoop } from '../src/loops.js';
import { watchIndexedRanges } from '../src/auction/indexed-ranges.js';
import { createCompetitionStatus } from '../src/auction/competition-status.js';
import { UNISWAP_V2_ROUTER_ABI } from '../src/orderbook/pricing/uniswap-v2-estimator.js';
import { SETTLE_ABI, decodeTradeFlags, orderDigest, orderDomain } from '../src/protocol/index.js';
import { toBytes, toHex } from '../src/db/codec.js';
import type { ChainNetwork } from '../src/chain/network.js';
import { waitFor as waitForValue } from './fixtures/wait-for.js';

const ERC20 = parseAbi(['function approve(address, uint256) returns (bool)', 'function transfer(address, uint256) returns (bool)', 'function balanceOf(address) view returns (uint256)']);
const SETTLEMENT_OWNER = parseAbi(['function invalidateOrder(bytes orderUid)']);
const E18 = 10n ** 18n;

describe('batch auctions that really settle', () => {
  let app: TestApp;
  let network: ChainNetwork;
  let server: HttpServer;
  let routesUrl: string;
  let loop: RunningAuctionLoop;
  let offset = 0;
  const clock = () => Math.floor(Date.now() / 1000) + offset;
  const abort = new AbortController();
  let competitionStatus: ReturnType<typeof createCompetitionStatus>;
  let trader0: LocalAccount;
  let trader1: LocalAccount;
  let WETH: Address;
  let USDC: Address;
  let DAI: Address;
  let COW: Address;

  const db = () => app.database.db;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(app.devnet!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  /** Stops block production and waits until the loop has finished with the last block: no auction runs until resumeMining. */
  const pauseMining = async () => {
    await rpc('evm_setIntervalMining', [0]);
    const head = Number(await network.client.getBlockNumber({ cacheTime: 0 }));
    await waitFor('the loop done with the head', async () => (loop.last && loop.last.auction.block >= head ? true : null));
    await loop.idle();
  };
  const resumeMining = () => rpc('evm_setIntervalMining', [1]);

  const waitFor = <T,>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 45_000) => waitForValue(what, probe, timeoutMs, 250);

  async function send(account: LocalAccount, to: Address, data: Hex, wait = true): Promise<Hex> {
    const wallet = createWalletClient({ account, chain: network.client.chain, transport: http(app.devnet!.rpcUrl) });
    const hash = await wallet.sendTransaction({ account, chain: network.client.chain, to, data, gas: 200_000n });
    if (wait) {
      const receipt = await network.client.waitForTransactionReceipt({ hash, pollingInterval: 200 });
      assert.equal(receipt.status, 'success', `transaction ${hash} reverted`);
    }
    return hash;
  }

  async function freshAccount(funding: Array<{ token: string; amount: string }>): Promise<LocalAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    const eth = await app.devnet!.faucet({ address: account.address, token: 'ETH', amount: '1' });
    await eth.waitForReceipt();
    const minted = await Promise.all(funding.map((f) => app.devnet!.faucet({ address: account.address, token: f.token, amount: f.amount })));
    const approvals: Hex[] = [];
    for (const token of [WETH, USDC, DAI, COW]) approvals.push(await send(account, token, encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [network.vaultRelayer, maxUint256] }), false));
    await Promise.all([...minted.map((m) => m.waitForReceipt()), ...approvals.map((hash) => network.client.waitForTransactionReceipt({ hash, pollingInterval: 200 }))]);
    return account;
  }

  async function marketOut(amountIn: bigint, path: Address[]): Promise<bigint> {
    const amounts = await network.client.readContract({ address: network.amm!.router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsOut', args: [amountIn, path] });
    return amounts[amounts.length - 1]!;
  }

  async function place(account: LocalAccount, params: Parameters<typeof makeOrder>[0]): Promise<Hex> {
    const order = makeOrder({ validTo: clock() + 900, ...params });
    const signature = await signOrder(account, order);
    const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'eip712', account.address));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Hex;
  }

  const getOrder = async (uid: Hex) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body;
  const tradesOf = async (uid: Hex) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ txHash: Hex; sellAmount: string; buyAmount: string; blockNumber: number; executedProtocolFees: Array<{ policy: object; amount: string; token: string }> }>;
  const fulfilled = (uid: Hex) => async () => ((await getOrder(uid)).status === 'fulfilled' ? true : null);
  const events = async (uid: Hex) =>
    (await db().selectFrom('order_events').select(['label', 'reason']).where('chain_id', '=', 31337).where('order_uid', '=', toBytes(uid)).orderBy('id').execute()).map((e) => (e.reason ? `${e.label}:${e.reason}` : e.label));
  const currentAuction = async () => (await call(routesUrl, 'GET', '/api/v1/auction')).body as { id: number; block: number; orders: Array<{ uid: Hex }>; prices: Record<string, string> };
  /** the first auction after `after` (blocks mined meanwhile rather than waited for: one auction per block) */
  const nextAuction = async (after: number) => waitFor(`an auction after ${after}`, async () => {
    const a = await currentAuction();
    if (a.id > after) return a;
    await rpc('evm_mine');
    return null;
  });
  const balances = (owner: Address, tokens: Address[], blockNumber: bigint) => network.reader.erc20Balances(owner, tokens, { blockNumber });

  before(async () => {
    app = await startTestApp({}, { now: clock });
    network = app.networks[0];
    const d = app.devnet!.describe();
    const traders = d.accounts.filter((a) => a.role === 'trader');
    trader0 = privateKeyToAccount(traders[0].privateKey);
    trader1 = privateKeyToAccount(traders[1].privateKey);
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address;
    [WETH, USDC, DAI, COW] = [token('WETH'), token('USDC'), token('DAI'), token('COW')];

    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    server = await buildHttpServer({ logger, rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    registerAuctionRoutes(server, { auctions: new AuctionStore(db(), 31337), competitions: new CompetitionStore(db(), 31337) });
    // the same routes for a chain that never had an auction
    await server.register(async (scope) => registerAuctionRoutes(scope as unknown as HttpServer, { auctions: new AuctionStore(db(), 424242), competitions: new CompetitionStore(db(), 424242) }), { prefix: '/none' });
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address();
    routesUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  after(async () => {
    abort.abort();
    await loop?.stop();
    await server?.close();
    await app?.stop();
  });

  it('answers 404 NotFound before the first auction, then serves the current one (reference §8.1)', async () => {
    const none = await call(routesUrl, 'GET', '/none/api/v1/auction');
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, { errorType: 'NotFound', description: 'There is no active auction' });

    // the node runs the indexer (src/loops.ts); its own auction loops are off here (startTestApp's AUCTIONS=false),
    // so this test starts one beside the node, following the indexer's checkpoint, whose stores it reads directly
    // (were auctions on, app.auctionLoops would hold the node's loop and it would be used instead). The content of
    // the node's own GET /api/v1/auction, with auctions on, is checked in test/orderbook-sdk.test.ts.
    const own = (app as TestApp & { auctionLoops?: Map<string, RunningAuctionLoop> }).auctionLoops?.get('devnet');
    loop =
      own ??
      wireAuctionLoop({
        network,
        db: db(),
        nativePrices: app.orderBooks.get('devnet')!.nativePrices,
        logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
        signal: abort.signal,
        indexer: watchIndexedRanges({ db: db(), chainId: 31337, signal: abort.signal, pollMs: 200 }),
      });
    competitionStatus = createCompetitionStatus({ chainId: 31337, db: db(), orders: app.orderBooks.get('devnet')!.orders, competitions: loop.competitions, now: clock });

    const first = await nextAuction(0);
    const second = await nextAuction(first.id);
    assert.ok(second.id > first.id && second.block >= first.block, 'ids strictly increase with the blocks');
    const res = await call(routesUrl, 'GET', '/api/v1/auction');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(Object.keys(res.body).sort(), ['block', 'id', 'orders', 'prices', 'surplusCapturingJitOrderOwners']);
    assert.deepEqual(res.body.surplusCapturingJitOrderOwners, []);

    for (const path of ['/api/v1/solver_competition/abc', '/api/v2/solver_competition/-1', '/api/v1/solver_competition/by_tx_hash/0x12']) {
      const bad = await call(routesUrl, 'GET', path);
      assert.equal(bad.status, 400, path);
      assert.equal(bad.body.errorType, 'InvalidParameter', path);
    }
    for (const path of ['/api/v1/solver_competition/999999999', '/api/v2/solver_competition/99999999999999999999', `/api/v2/solver_competition/by_tx_hash/0x${'ab'.repeat(32)}`]) {
      const missing = await call(routesUrl, 'GET', path);
      assert.equal(missing.status, 404, path);
      assert.equal(missing.body.errorType, 'NotFound', path);
    }
  });

  it('settles two opposite orders of two demo accounts as a CoW: one settlement, no AMM, exact balances, both fulfilled, both solvers ranked', async () => {
    const m = await marketOut(E18, [WETH, USDC]); // USDC for 1 WETH on the pool
    await pauseMining();
    let a: Hex;
    let b: Hex;
    try {
      a = await place(trader0, { sellToken: WETH, buyToken: USDC, sellAmount: E18, buyAmount: (m * 98n) / 100n });
      b = await place(trader1, { sellToken: USDC, buyToken: WETH, sellAmount: m, buyAmount: (98n * E18) / 100n });
    } finally {
      await resumeMining();
    }
    await waitFor('both orders fulfilled', async () => (await fulfilled(a)()) && (await fulfilled(b)()));

    const [ta] = await tradesOf(a);
    const [tb] = await tradesOf(b);
    assert.ok(ta && tb, `one trade each: ${JSON.stringify([await tradesOf(a), await tradesOf(b), await getOrder(a), await getOrder(b)])}`);
    assert.equal((await tradesOf(a)).length, 1);
    assert.equal(ta.txHash, tb.txHash, 'one settlement');
    assert.match(ta.txHash, /^0x[0-9a-f]{64}$/);
    // CoW at the price that balances both: each gets what the other sold less its fees (network fee, the default
    // 2 bps volume fee), which the settlement keeps
    assert.deepEqual([ta.sellAmount, tb.sellAmount], [E18.toString(), m.toString()]);
    assert.ok(BigInt(ta.buyAmount) < m && BigInt(ta.buyAmount) >= (m * 98n) / 100n, `${ta.buyAmount} of ${m}`);
    assert.ok(BigInt(tb.buyAmount) < E18 && BigInt(tb.buyAmount) >= (E18 * 98n) / 100n, `${tb.buyAmount} of ${E18}`);
    assert.equal(Object.keys(ta.executedProtocolFees.at(-1)!.policy)[0], 'volume', 'the default schedule ends with the volume fee');

    const tx = await network.client.getTransaction({ hash: ta.txHash });
    assert.equal(tx.to?.toLowerCase(), network.settlement);
    const solverAccount = app.devnet!.describe().accounts.find((x) => x.role === 'solver')!.address.toLowerCase();
    assert.equal(tx.from.toLowerCase(), solverAccount, 'sent by the allow-listed solver account');
    const { args } = decodeFunctionData({ abi: SETTLE_ABI, data: tx.input });
    assert.deepEqual(args[3], [[], [], []], 'no interaction: no AMM');
    assert.equal(args[2].length, 2);
    const interactions = await db().selectFrom('settlement_interactions').selectAll().where('tx_hash', '=', toBytes(ta.txHash)).execute();
    assert.equal(interactions.length, 0);

    // balances moved by exactly the executed amounts
    const block = BigInt(ta.blockNumber);
    const [w0, u0] = await balances(trader0.address, [WETH, USDC], block - 1n);
    const [w0b, u0b] = await balances(trader0.address, [WETH, USDC], block);
    const [w1, u1] = await balances(trader1.address, [WETH, USDC], block - 1n);
    const [w1b, u1b] = await balances(trader1.address, [WETH, USDC], block);
    assert.equal(w0! - w0b!, E18);
    assert.equal(u0b! - u0!, BigInt(ta.buyAmount));
    assert.equal(u1! - u1b!, m);
    assert.equal(w1b! - w1!, BigInt(tb.buyAmount));

    // the competition: both solvers proposed, the CoW won
    // the trade is indexed from the chain; the driver records its submission as mined once it has the receipt
    const v1 = await waitFor('the competition lists its mined settlement', async () => {
      const r = await call(routesUrl, 'GET', `/api/v1/solver_competition/by_tx_hash/${ta.txHash}`);
      return r.status === 200 && r.body.transactionHashes.length > 0 ? r : null;
    });
    assert.deepEqual(v1.body.transactionHashes, [ta.txHash]);
    assert.ok(v1.body.auction.orders.includes(a) && v1.body.auction.orders.includes(b));
    const solutions = v1.body.solutions as Array<{ solver: string; ranking: number; isWinner: boolean; score: string; orders: Array<{ id: Hex }> }>;
    // the AMM router proposed too: its merged solution and (issue 19, major 9) each of its parts on its own
    assert.deepEqual(solutions.map((s) => [s.solver, s.ranking, s.isWinner]).slice(0, 2), [['cow-matcher', 1, true], ['amm-router', 2, false]]);
    assert.ok(solutions.slice(1).every((s) => s.solver === 'amm-router' && !s.isWinner), 'only the AMM router competed with the CoW');
    assert.ok(BigInt(solutions[0].score) > BigInt(solutions[1].score) && BigInt(solutions[1].score) > 0n);
    assert.deepEqual(solutions[0].orders.map((o) => o.id).sort(), [a, b].sort(), 'the CoW settles both orders');
    for (const s of solutions) assert.ok(s.orders.length > 0 && s.orders.every((o) => o.id === a || o.id === b));
    assert.deepEqual([...new Set(solutions.slice(1).flatMap((s) => s.orders.map((o) => o.id)))].sort(), [a, b].sort(), 'the AMM router routed both');
    const v2 = await call(routesUrl, 'GET', `/api/v2/solver_competition/${v1.body.auctionId}`);
    assert.equal(v2.status, 200);
    assert.equal(v2.body.solutions[0].txHash, ta.txHash);
    assert.equal(v2.body.solutions[0].solverAddress, solverAccount);
    assert.equal(v2.body.referenceScores[solverAccount], solutions[1].score, 'reference score: the best other solver');
    const latest = await call(routesUrl, 'GET', '/api/v1/solver_competition/latest');
    assert.equal(latest.status, 200);
    assert.ok(latest.body.auctionId >= v1.body.auctionId);

    const status = await competitionStatus(a);
    assert.equal(status?.type, 'traded');
    assert.deepEqual(status?.value?.[0], { solver: 'cow-matcher', executedAmounts: { sell: E18.toString(), buy: ta.buyAmount } });
    // then every AMM-router solution of that competition: those that routed the order (its merge and its own part)
    // with their executed amounts, the part that routed only the other order without
    const others = status!.value!.slice(1);
    assert.ok(others.every((v) => v.solver === 'amm-router'), JSON.stringify(status));
    assert.equal(others.filter((v) => v.executedAmounts !== undefined).length, 2, JSON.stringify(status));
    // the lifecycle writes `traded` once the indexed range is reported to it
    await waitFor('the traded events', async () => (await events(a)).includes('traded') && (await events(b)).includes('traded'));
    assert.deepEqual(await events(a), ['created', 'ready', 'executing', 'traded']);
    assert.deepEqual(await events(b), ['created', 'ready', 'executing', 'traded']);
  });

  it('routes a lone order through the AMM: the settlement approves the router and swaps with its own balance', async () => {
    const out = await marketOut(E18 / 2n, [WETH, DAI]);
    const uid = await place(trader0, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 2n, buyAmount: (out * 98n) / 100n });
    await waitFor('the AMM order fulfilled', fulfilled(uid));
    const [trade] = await tradesOf(uid);
    const tx = await network.client.getTransaction({ hash: trade.txHash });
    const { args } = decodeFunctionData({ abi: SETTLE_ABI, data: tx.input });
    const intra = args[3][1];
    assert.equal(args[3][0].length + args[3][2].length, 0);
    assert.deepEqual(intra.map((i) => i.target.toLowerCase()), [WETH, network.amm!.router], 'approve the router, then swap');
    const approve = decodeFunctionData({ abi: ERC20, data: intra[0].callData });
    assert.equal((approve.args[0] as string).toLowerCase(), network.amm!.router);
    assert.equal(approve.args[1], E18 / 2n);
    const swap = decodeFunctionData({ abi: parseAbi(['function swapExactTokensForTokens(uint256, uint256, address[], address, uint256)']), data: intra[1].callData });
    assert.equal(swap.args[0], E18 / 2n);
    assert.ok(swap.args[1] >= BigInt(trade.buyAmount), 'the owner is paid from the swap\'s minimum out');
    // issue 19: no slippage kept back — the swap demands what the pool yields, the order is paid that less its fees
    // (issue 23): the floor is exactly what the order is paid, so a swap landing first eats into the fees, never the buffers
    assert.equal(swap.args[1], BigInt(trade.buyAmount), 'the minimum out is the order\'s payout');
    assert.ok(swap.args[1] <= out);
    assert.equal(swap.args[3].toLowerCase(), network.settlement);
    const indexed = await waitFor('the interactions indexed', async () => {
      const rows = await db().selectFrom('settlement_interactions').select('target').where('tx_hash', '=', toBytes(trade.txHash)).execute();
      return rows.length === 2 ? rows : null;
    });
    assert.deepEqual(indexed.map((r) => toHex(r.target)).sort(), [WETH, network.amm!.router].sort());
    const [before] = await balances(trader0.address, [DAI], BigInt(trade.blockNumber) - 1n);
    const [afterwards] = await balances(trader0.address, [DAI], BigInt(trade.blockNumber));
    assert.equal(afterwards! - before!, BigInt(trade.buyAmount));
    const competition = await call(routesUrl, 'GET', `/api/v1/solver_competition/by_tx_hash/${trade.txHash}`);
    assert.deepEqual(competition.body.solutions.map((s: { solver: string; isWinner: boolean }) => [s.solver, s.isWinner]), [['amm-router', true]], 'no opposite order: no CoW solution');
  });

  it('fills a partially fillable order across two auctions (as far as the owner’s balance allows each time)', async () => {
    const owner = await freshAccount([{ token: 'WETH', amount: '1' }]);
    const m = await marketOut(E18, [WETH, USDC]);
    await pauseMining();
    let uid: Hex;
    try {
      uid = await place(owner, { sellToken: WETH, buyToken: USDC, sellAmount: E18, buyAmount: (m * 97n) / 100n, partiallyFillable: true });
      await send(owner, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [trader1.address, E18 / 2n] }), false);
    } finally {
      await resumeMining();
    }
    const first = await waitFor('a first fill', async () => {
      const o = await getOrder(uid);
      return BigInt(o.executedSellAmount) > 0n ? o : null;
    });
    assert.equal(first.status, 'open', 'a partially filled order stays open');
    assert.equal(first.executedSellAmount, (E18 / 2n).toString(), 'filled as far as the balance allows');
    await waitFor('the rest waits for funds', async () => (await events(uid)).includes('invalid:insufficient_balance'));
    await send(trader1, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [owner.address, E18 / 2n] }));
    await waitFor('the order fulfilled', fulfilled(uid));
    const trades = await tradesOf(uid);
    assert.equal(trades.length, 2);
    assert.notEqual(trades[0].txHash, trades[1].txHash, 'two settlements');
    assert.equal(trades.reduce((s, t) => s + BigInt(t.sellAmount), 0n), E18);
    await waitFor('the second traded event', async () => (await events(uid)).filter((e) => e === 'traded').length === 2);
    assert.deepEqual(await events(uid), ['created', 'ready', 'executing', 'traded', 'invalid:insufficient_balance', 'ready', 'executing', 'traded']);
  });

  it('settles orders of every signing scheme with the settlement encoding of each (ethsign, eip1271, presign)', async () => {
    const out = await marketOut(E18 / 5n, [WETH, DAI]);
    const limit = (out * 95n) / 100n;
    // presign: refused by the auction until setPreSignature is indexed
    const presignOrder = makeOrder({ sellToken: WETH, buyToken: DAI, sellAmount: E18 / 5n, buyAmount: limit, validTo: clock() + 900 });
    const posted = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(presignOrder, '0x', 'presign', trader0.address));
    assert.equal(posted.status, 201, JSON.stringify(posted.body));
    const presignUid = posted.body as Hex;
    await waitFor('the presign order left out', async () => (await events(presignUid)).includes('invalid:invalid_signature'));
    // ethsign: personal_sign of the digest
    const ethsignOrder = makeOrder({ sellToken: WETH, buyToken: DAI, sellAmount: E18 / 5n + 1n, buyAmount: limit, validTo: clock() + 900 });
    const ethsigned = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(ethsignOrder, await signOrder(trader1, ethsignOrder, 'ethsign'), 'ethsign'));
    assert.equal(ethsigned.status, 201, JSON.stringify(ethsigned.body));
    // eip1271: the devnet's smart wallet (owned by trader 0) accepts its owner's signature of the digest
    const wallet = app.devnet!.deployment.contracts.smartWallet.toLowerCase() as Address;
    const walletOrder = makeOrder({ sellToken: WETH, buyToken: DAI, sellAmount: E18 / 5n + 2n, buyAmount: limit, validTo: clock() + 900 });
    const walletSignature = await trader0.sign!({ hash: orderDigest(walletOrder, orderDomain(31337)) });
    const walletPosted = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(walletOrder, walletSignature, 'eip1271', wallet));
    assert.equal(walletPosted.status, 201, JSON.stringify(walletPosted.body));
    await send(trader0, network.settlement, encodeFunctionData({ abi: parseAbi(['function setPreSignature(bytes orderUid, bool signed)']), functionName: 'setPreSignature', args: [presignUid, true] }));

    const uids = [presignUid, ethsigned.body as Hex, walletPosted.body as Hex];
    await waitFor('all three fulfilled', async () => {
      for (const uid of uids) if (!(await fulfilled(uid)())) return null;
      return true;
    });
    const expected: Record<string, { scheme: string; signature: Hex; sellAmount: bigint }> = {
      [presignUid]: { scheme: 'presign', signature: trader0.address.toLowerCase() as Hex, sellAmount: presignOrder.sellAmount },
      [uids[1]]: { scheme: 'ethsign', signature: (await getOrder(uids[1])).signature as Hex, sellAmount: ethsignOrder.sellAmount },
      [uids[2]]: { scheme: 'eip1271', signature: `${wallet}${walletSignature.slice(2)}` as Hex, sellAmount: walletOrder.sellAmount },
    };
    for (const uid of uids) {
      const [trade] = await tradesOf(uid);
      const tx = await network.client.getTransaction({ hash: trade.txHash });
      const { args } = decodeFunctionData({ abi: SETTLE_ABI, data: tx.input });
      const onChain = args[2].find((t) => t.sellAmount === expected[uid].sellAmount)!;
      assert.equal(decodeTradeFlags(onChain.flags).signingScheme, expected[uid].scheme);
      assert.equal(onChain.signature.toLowerCase(), expected[uid].signature.toLowerCase(), `${expected[uid].scheme} signature encoding`);
    }
  });

  it('keeps an out-of-market limit order in the auction until it expires, then records it expired', async () => {
    const m = await marketOut(E18 / 10n, [WETH, USDC]);
    const uid = await place(trader0, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, buyAmount: m * 2n, validTo: clock() + 90 });
    await waitFor('the order in the auction', async () => (await currentAuction()).orders.some((o) => o.uid === uid));
    assert.equal((await getOrder(uid)).status, 'open');
    assert.equal((await competitionStatus(uid))?.type, 'active');
    // two minutes later, on the chain and for the order book
    offset += 120;
    await rpc('evm_increaseTime', [120]);
    await waitFor('the expired event', async () => (await events(uid)).includes('expired'));
    assert.equal((await getOrder(uid)).status, 'expired');
    const later = await nextAuction((await currentAuction()).id);
    assert.ok(!later.orders.some((o) => o.uid === uid), 'no longer in the auction');
    assert.equal((await tradesOf(uid)).length, 0);
    assert.equal((await events(uid)).filter((e) => e === 'expired').length, 1);
  });

  it('drops an order its owner cancels on chain with invalidateOrder', async () => {
    const m = await marketOut(E18 / 10n, [WETH, USDC]);
    const uid = await place(trader1, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, buyAmount: m * 2n });
    await waitFor('the order in the auction', async () => (await currentAuction()).orders.some((o) => o.uid === uid));
    await send(trader1, network.settlement, encodeFunctionData({ abi: SETTLEMENT_OWNER, functionName: 'invalidateOrder', args: [uid] }));
    const cancelled = await waitFor('the order cancelled', async () => {
      const o = await getOrder(uid);
      return o.status === 'cancelled' ? o : null;
    });
    assert.equal(cancelled.invalidated, true);
    assert.equal(cancelled.onchainUser, trader1.address.toLowerCase());
    await waitFor('the cancelled event', async () => (await events(uid)).includes('cancelled:onchain_invalidation'));
    const later = await nextAuction((await currentAuction()).id);
    assert.ok(!later.orders.some((o) => o.uid === uid));
    assert.equal((await competitionStatus(uid))?.type, 'cancelled');
    assert.equal((await events(uid)).filter((e) => e.startsWith('cancelled')).length, 1);
  });

  it('leaves out an order whose owner spent the balance before the auction, and records why once', async () => {
    const owner = await freshAccount([{ token: 'COW', amount: '1000' }]);
    const out = await marketOut(1000n * E18, [COW, WETH]);
    await pauseMining();
    let uid: Hex;
    try {
      uid = await place(owner, { sellToken: COW, buyToken: WETH, sellAmount: 1000n * E18, buyAmount: (out * 97n) / 100n });
      await send(owner, COW, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [trader0.address, 1000n * E18] }), false);
    } finally {
      await resumeMining();
    }
    await waitFor('the invalid event', async () => (await events(uid)).includes('invalid:insufficient_balance'));
    const seen = (await currentAuction()).id;
    const later = await nextAuction(seen + 2);
    assert.ok(!later.orders.some((o) => o.uid === uid), 'not in the auction');
    assert.deepEqual(await events(uid), ['created', 'invalid:insufficient_balance'], 'recorded once, however many auctions pass');
    assert.equal((await getOrder(uid)).status, 'open');
    assert.equal((await competitionStatus(uid))?.type, 'open');
    assert.equal((await tradesOf(uid)).length, 0);
  });

  it('records a settlement that reverts on chain and settles its order in a later auction', async () => {
    const owner = await freshAccount([{ token: 'WETH', amount: '1' }]);
    const m = await marketOut(E18, [WETH, USDC]);
    let uid: Hex | null = null;
    let sabotaged: Hex | null = null;
    loop.driver!.hooks.beforeSend = async (plan) => {
      if (!uid || sabotaged || !plan.solution.trades.some((t) => t.order.uid === uid)) return;
      // after the simulation passed: the owner moves its WETH away, so the settlement reverts on chain
      sabotaged = await send(owner, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [trader0.address, E18] }));
    };
    try {
      uid = await place(owner, { sellToken: WETH, buyToken: USDC, sellAmount: E18, buyAmount: (m * 97n) / 100n });
      const reverted = await waitFor('the reverted submission', async () => {
        const rows = await db().selectFrom('competition_settlements').selectAll().where('chain_id', '=', 31337).where('status', '=', 'reverted').execute();
        return rows.find((r) => r.order_uids.some((u) => toHex(u) === uid)) ?? null;
      });
      assert.ok(sabotaged);
      const txHash = toHex(reverted.tx_hash!);
      const receipt = await network.client.getTransactionReceipt({ hash: txHash });
      assert.equal(receipt.status, 'reverted', 'the settlement really reverted on chain');
      assert.equal((await getOrder(uid)).status, 'open', 'the order is not lost');
      assert.equal((await tradesOf(uid)).length, 0);
      assert.ok((await events(uid)).includes('executing'));
      // the owner gets its WETH back: a later auction settles the order (once the same solution's cooldown of 20
      // blocks is over: mined here rather than waited for)
      await send(trader0, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [owner.address, E18] }));
      await waitFor('the order fulfilled', async () => {
        await rpc('evm_mine');
        return fulfilled(uid!)();
      });
      const [trade] = await tradesOf(uid);
      assert.notEqual(trade.txHash, txHash);
      const settled = await db().selectFrom('competition_settlements').select(['auction_id', 'status']).where('tx_hash', '=', toBytes(trade.txHash)).executeTakeFirstOrThrow();
      assert.ok(Number(settled.auction_id) > Number(reverted.auction_id));
      await waitFor('the submission marked settled', async () => {
        const row = await db().selectFrom('competition_settlements').select('status').where('tx_hash', '=', toBytes(trade.txHash)).executeTakeFirst();
        return row?.status === 'settled';
      });
    } finally {
      loop.driver!.hooks.beforeSend = undefined;
    }
  });
});
