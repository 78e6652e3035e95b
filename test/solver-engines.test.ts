/**
 * Solver engines over the official Solver Engine API, on the real devnet (issue 12). A node runs its auctions
 * with SOLVERS listing external engines written here — real HTTP servers speaking the API — next to the
 * built-in ones. A market maker engine quoting better than the pools wins and settles through GPv2Settlement;
 * engines answering a zero price, a price beyond the limit, too late, or a solution that reverts in
 * simulation are refused with the API's notify kinds while the others still settle; and the built-in engines
 * answer over HTTP exactly as in process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, maxUint256, parseAbi, type Address, type Hex, type LocalAccount } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { E18, trading, waitFor, type Trading } from './fixtures/trading.js';
import { call } from './fixtures/orders.js';
import { upstreamValidators } from './fixtures/solvers-openapi.js';
import { startEngineServer, type EngineServer } from './fixtures/engine-server.js';
import { skipUnless } from './fixtures/required-services.js';
import { builtInEngine, EngineService } from '../src/solver-api/engines.js';

const ERC20 = parseAbi(['function transfer(address, uint256) returns (bool)', 'function transferFrom(address, address, uint256) returns (bool)', 'function approve(address, uint256) returns (bool)']);
const ENGINE_TOKEN = 'engines-test-token-0123456789';
const auth = { authorization: `Bearer ${ENGINE_TOKEN}` };
type Mode = 'good' | 'zero' | 'limit' | 'slow' | 'revert';
const MODES: Mode[] = ['good', 'zero', 'limit', 'slow', 'revert'];
type WireOrder = { uid: Hex; sellToken: Address; buyToken: Address; sellAmount: string; buyAmount: string; kind: string };
type WireAuction = { id: string; orders: WireOrder[]; tokens: Record<string, unknown>; liquidity: unknown[]; deadline: string };

describe('solver engines over the Solver Engine API', () => {
  // checks against the upstream document itself where the project's shared folder has it (one skip line otherwise)
  let upstream: ReturnType<typeof upstreamValidators> | undefined;
  before(async () => {
    if (!(await skipUnless('solvers-openapi'))) upstream = upstreamValidators();
  });
  let app: TestApp;
  let t: Trading;
  let engines: EngineServer;
  let marketMaker: LocalAccount;
  /** orders the external engines act on, with the buy amount the market maker pays */
  const quotes = new Map<Hex, bigint>();
  let goodOn = true;
  const received = new Map<Mode, WireAuction[]>(MODES.map((m) => [m, []]));
  const invalidAuctions: string[] = [];


  /** What each external engine answers for an auction. */
  function solve(mode: Mode, auction: WireAuction): unknown[] {
    const settlement = app.networks[0]!.settlement;
    const out: unknown[] = [];
    for (const order of auction.orders) {
      const pays = quotes.get(order.uid.toLowerCase() as Hex);
      if (pays === undefined || order.kind !== 'sell') continue;
      if (mode === 'good' && !goodOn) continue;
      const sell = BigInt(order.sellAmount);
      // the market maker's tokens come in through a custom interaction it declares, the trader's go out to it
      const rfq = (buy: bigint, from: Address) => [
        { kind: 'custom', target: order.buyToken, value: '0', callData: encodeFunctionData({ abi: ERC20, functionName: 'transferFrom', args: [from, settlement, buy] }), allowances: [], inputs: [], outputs: [{ token: order.buyToken, amount: buy.toString() }] },
        { kind: 'custom', target: order.sellToken, value: '0', callData: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [from, sell] }), allowances: [], inputs: [{ token: order.sellToken, amount: sell.toString() }], outputs: [] },
      ];
      const solution = (buy: bigint, interactions: unknown[], prices = { [order.sellToken]: buy.toString(), [order.buyToken]: sell.toString() }) => ({
        id: out.length,
        prices,
        trades: [{ kind: 'fulfillment', order: order.uid, executedAmount: sell.toString() }],
        interactions,
        preInteractions: [],
        postInteractions: [],
        gas: 200000,
      });
      if (mode === 'good') out.push(solution(pays, rfq(pays, marketMaker.address)));
      if (mode === 'zero') out.push(solution(pays, rfq(pays, marketMaker.address), { [order.sellToken]: '0', [order.buyToken]: sell.toString() }));
      if (mode === 'limit') {
        const below = BigInt(order.buyAmount) / 2n;
        out.push(solution(below, rfq(below, marketMaker.address)));
      }
      // promises even more, from an account that never approved the settlement: the transferFrom reverts
      if (mode === 'revert') out.push(solution((pays * 105n) / 100n, rfq((pays * 105n) / 100n, '0x000000000000000000000000000000000000dead')));
    }
    return out;
  }

  before(async () => {
    engines = await startEngineServer<WireAuction>(async (name, auction, res) => {
      const mode = name as Mode;
      if (upstream && !upstream.auction(auction)) invalidAuctions.push(upstream.errors(upstream.auction));
      received.get(mode)?.push(auction);
      if (mode === 'slow') await new Promise((resolve) => setTimeout(resolve, 8_000)); // the engine's own slowness, past the time limit
      return res.destroyed ? null : solve(mode, auction);
    });
    const solvers = [...MODES.map((m) => `${m}=${engines.url(m)}`), 'cow-matcher', 'amm-router'].join(',');
    app = await startTestApp({ AUCTIONS: 'true', SOLVERS: solvers, SOLVER_TIME_LIMIT_MS: '3000', SOLVER_ENGINE_TOKEN: ENGINE_TOKEN });
    t = trading(app);
    marketMaker = await t.freshAccount([{ token: 'USDC', amount: '100000' }]);
    await t.send(marketMaker, t.tokens.USDC, encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [app.networks[0]!.settlement, maxUint256] }));
  });

  after(async () => {
    await app?.stop();
    await engines?.close();
  });

  const competitions = () => app.auctionLoops.get('devnet')!.competitions;
  const order = async (uid: Hex) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status: string; executedBuyAmount: string };

  it('an external engine with a better price wins against the built-ins and settles; refused engines hear why', async () => {
    const trader = await t.freshAccount([{ token: 'WETH', amount: '2' }]);
    const market = await t.marketOut(E18, [t.tokens.WETH, t.tokens.USDC]);
    const uid = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: E18, buyAmount: (market * 90n) / 100n, kind: 'sell' });
    const pays = (market * 101n) / 100n;
    quotes.set(uid.toLowerCase() as Hex, pays);
    await waitFor('the order filled', async () => ((await order(uid)).status === 'fulfilled' ? true : null), 90_000);
    // the trader got the market maker's price, 1 % above the pool, less the protocol fees batchbook charges on top
    // of every engine's solution (the default schedule: half the improvement over the quote, then 2 bps)
    const got = BigInt((await order(uid)).executedBuyAmount);
    const [trade] = (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ executedProtocolFees: Array<{ amount: string }> }>;
    const fees = trade!.executedProtocolFees.reduce((sum, f) => sum + BigInt(f.amount), 0n);
    const gap = pays - (got + fees);
    assert.ok(fees > 0n && gap >= -4n && gap <= 4n, `${got} + fees ${fees} = the ${pays} the engine paid (to the read-back's rounding)`);
    const success = await waitFor('success notified to the winning engine', async () => engines.notified('good').find((n) => n.kind === 'success'));
    const competition = await competitions().byAuctionId(Number(success.auctionId));
    assert.ok(competition);
    const byEngine = new Map(competition.solutions.map((s) => [s.solver, s]));
    assert.equal(byEngine.get('good')?.isWinner, true);
    assert.deepEqual(byEngine.get('good')?.orders.map((o) => [o.id, o.buyAmount]), [[uid, got.toString()]]);
    // the refused ones are on the record with their engine's name and why
    assert.match(byEngine.get('zero')?.filterReason ?? '', /clearing price 0/);
    assert.match(byEngine.get('limit')?.filterReason ?? '', /limit price/);
    assert.match(byEngine.get('revert')?.filterReason ?? '', /^simulation/);
    assert.ok(byEngine.get('amm-router') && !byEngine.get('amm-router')!.isWinner, 'the built-in router competed and lost');
    assert.equal(byEngine.has('slow'), false, 'a late engine has no solution');
    const kinds = async (mode: Mode, kind: string) => waitFor(`${mode} told ${kind}`, async () => engines.notified(mode).some((n) => n.auctionId === success.auctionId && n.kind === kind));
    await kinds('zero', 'invalidClearingPrices');
    await kinds('limit', 'invalidClearingPrices');
    await kinds('revert', 'simulationFailed');
    await kinds('slow', 'timeout');
    assert.deepEqual(invalidAuctions, [], 'every auction sent validates against the upstream document');
    const auction = received.get('good')!.find((a) => a.id === success.auctionId)!;
    assert.ok(auction.liquidity.length > 0, 'the devnet pools are sent as liquidity');
    assert.ok(Date.parse(auction.deadline) > Date.now() - 120_000);
  });

  it('with the better engine silent, the built-ins still settle while the faulty engines are refused', async () => {
    goodOn = false;
    const trader = await t.freshAccount([{ token: 'WETH', amount: '2' }]);
    const market = await t.marketOut(E18 / 2n, [t.tokens.WETH, t.tokens.USDC]);
    const uid = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: E18 / 2n, buyAmount: (market * 90n) / 100n, kind: 'sell' });
    quotes.set(uid.toLowerCase() as Hex, (market * 101n) / 100n);
    await waitFor('the order filled', async () => ((await order(uid)).status === 'fulfilled' ? true : null), 90_000);
    const competition = await waitFor('its winning competition', async () => {
      const c = await competitions().latestForOrder(uid);
      return c?.solutions.some((s) => s.isWinner && s.orders.some((o) => o.id === uid)) ? c : null;
    });
    const winner = competition.solutions.find((s) => s.isWinner)!;
    assert.equal(winner.solver, 'amm-router');
    for (const engine of ['zero', 'limit', 'revert']) assert.ok(competition.solutions.some((s) => s.solver === engine && s.filteredOut), `${engine} refused`);
    await waitFor('revert engine told simulationFailed again', async () => engines.notified('revert').some((n) => n.auctionId === String(competition.auctionId) && n.kind === 'simulationFailed'));
  });

  it('the built-in engines answer over HTTP exactly as in process, with solutions valid under the document', async () => {
    const network = app.networks[0]!;
    // an auction the node sent, with a deadline still ahead (engines answer nothing past it)
    const auction = { ...received.get('zero')!.at(-1)!, deadline: new Date(Date.now() + 60_000).toISOString() };
    for (const name of ['amm-router', 'cow-matcher'] as const) {
      const inProcess = JSON.parse(await new EngineService(builtInEngine(name, network)).solve(auction));
      for (const path of [`/solvers/${name}/solve`, `/devnet/solvers/${name}/solve`]) {
        const res = await call(app.baseUrl, 'POST', path, auction, auth);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body, inProcess);
        if (upstream) assert.ok(upstream.solveResponse(res.body), upstream.errors(upstream.solveResponse));
      }
    }
    const routed = (await call(app.baseUrl, 'POST', '/solvers/amm-router/solve', auction, auth)).body as { solutions: unknown[] };
    assert.ok(routed.solutions.length > 0, 'the router answers the auction with a solution');
    const bad = await call(app.baseUrl, 'POST', '/solvers/amm-router/solve', { ...auction, effectiveGasPrice: '12abc' }, auth);
    assert.equal(bad.status, 400);
    assert.match((bad.body as { message: string }).message, /effectiveGasPrice/);
    assert.equal((await call(app.baseUrl, 'POST', '/solvers/nobody/solve', auction, auth)).status, 404);
    assert.equal((await call(app.baseUrl, 'POST', '/solvers/amm-router/solve', auction)).status, 401, 'not without the token');
    const notify = await call(app.baseUrl, 'POST', '/solvers/amm-router/notify', { auctionId: auction.id, solutionId: 0, kind: 'success' }, auth);
    assert.equal(notify.status, 200);
  });
});
