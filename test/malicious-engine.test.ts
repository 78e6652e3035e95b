/**
 * A misbehaving external engine cannot move the settlement's own funds (issue 19, major 8), on the real devnet.
 * Two engines — real HTTP servers speaking the Solver Engine API — outbid the built-ins for an order with a
 * market maker's tokens, and each adds an attack: `thief` appends `WETH.transfer(attacker, 0.1 WETH)` from the
 * settlement's buffer, declared as nothing; `approver` asks for an allowance of 2^256−1 of WETH to the attacker.
 * Neither is executed: the attacker receives nothing and holds no allowance, the settlement's buffer does not fall,
 * both solutions stay on the v1 competition record as filtered out, and the order settles through the built-in
 * router. Without SOLVER_ENGINE_TOKEN the node serves no engine route.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, maxUint256, parseAbi, type Address, type Hex, type LocalAccount } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { E18, trading, waitFor, type Trading } from './fixtures/trading.js';
import { call } from './fixtures/orders.js';
import { startEngineServer, type EngineServer } from './fixtures/engine-server.js';
import { toBytes } from '../src/db/codec.js';

const ERC20 = parseAbi([
  'function transfer(address, uint256) returns (bool)',
  'function transferFrom(address, address, uint256) returns (bool)',
  'function approve(address, uint256) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
]);
const ATTACKER = '0x00000000000000000000000000000000000a77ac' as Address;
type Mode = 'thief' | 'approver';
type WireOrder = { uid: Hex; sellToken: Address; buyToken: Address; sellAmount: string; kind: string };

describe('a malicious external engine', () => {
  let app: TestApp;
  let t: Trading;
  let engines: EngineServer;
  let marketMaker: LocalAccount;
  /** orders the engines act on, with the buy amount they promise */
  const quotes = new Map<Hex, bigint>();
  let answered = 0;

  function solve(mode: Mode, orders: WireOrder[]): unknown[] {
    const settlement = app.networks[0]!.settlement;
    const out: unknown[] = [];
    for (const order of orders) {
      const pays = quotes.get(order.uid.toLowerCase() as Hex);
      if (pays === undefined || order.kind !== 'sell') continue;
      const sell = BigInt(order.sellAmount);
      // an honest-looking RFQ: the market maker's buy tokens in, the trader's sell tokens out to it, both declared
      const rfq = [
        { kind: 'custom', target: order.buyToken, value: '0', callData: encodeFunctionData({ abi: ERC20, functionName: 'transferFrom', args: [marketMaker.address, settlement, pays] }), allowances: [], inputs: [], outputs: [{ token: order.buyToken, amount: pays.toString() }] },
        { kind: 'custom', target: order.sellToken, value: '0', callData: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [marketMaker.address, sell] }), allowances: [], inputs: [{ token: order.sellToken, amount: sell.toString() }], outputs: [] },
      ];
      const attack =
        mode === 'thief'
          ? { kind: 'custom', target: t.tokens.WETH, value: '0', callData: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ATTACKER, E18 / 10n] }), allowances: [], inputs: [], outputs: [] }
          : { kind: 'custom', target: t.tokens.WETH, value: '0', callData: '0x', allowances: [{ token: t.tokens.WETH, spender: ATTACKER, amount: maxUint256.toString() }], inputs: [], outputs: [] };
      out.push({
        id: out.length,
        prices: { [order.sellToken]: pays.toString(), [order.buyToken]: sell.toString() },
        trades: [{ kind: 'fulfillment', order: order.uid, executedAmount: sell.toString() }],
        interactions: [...rfq, attack],
        preInteractions: [],
        postInteractions: [],
        gas: 250000,
      });
    }
    return out;
  }

  before(async () => {
    engines = await startEngineServer<{ orders: WireOrder[] }>((name, auction) => {
      const solutions = solve(name as Mode, auction.orders);
      if (solutions.length > 0) answered++;
      return solutions;
    });
    app = await startTestApp({ AUCTIONS: 'true', SOLVERS: `thief=${engines.url('thief')},approver=${engines.url('approver')},cow-matcher,amm-router`, SOLVER_TIME_LIMIT_MS: '3000' });
    t = trading(app);
    marketMaker = await t.freshAccount([{ token: 'USDC', amount: '100000' }]);
    await t.send(marketMaker, t.tokens.USDC, encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [app.networks[0]!.settlement, maxUint256] }));
  });

  after(async () => {
    await app?.stop();
    await engines?.close();
  });

  const read = (functionName: 'balanceOf' | 'allowance', args: Address[]) =>
    app.networks[0]!.client.readContract({ address: t.tokens.WETH, abi: ERC20, functionName, args: args as never }) as Promise<bigint>;

  it('never executes its theft or its allowance; the order settles through an honest engine', async () => {
    const settlement = app.networks[0]!.settlement;
    // a buffer for the thief to aim at (the donor and the trader made at once)
    const [donor, trader] = await Promise.all([t.freshAccount([{ token: 'WETH', amount: '1' }]), t.freshAccount([{ token: 'WETH', amount: '2' }])]);
    await t.send(donor, t.tokens.WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [settlement, E18 / 2n] }));
    const buffer = await read('balanceOf', [settlement]);
    assert.ok(buffer >= E18 / 2n);

    const market = await t.marketOut(E18, [t.tokens.WETH, t.tokens.USDC]);
    const uid = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: E18, buyAmount: (market * 90n) / 100n, kind: 'sell' });
    // 3 % above the pool: both attackers outrank the built-in router
    quotes.set(uid.toLowerCase() as Hex, (market * 103n) / 100n);

    const competitions = app.auctionLoops.get('devnet')!.competitions;
    const order = async () => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status: string; executedBuyAmount: string };
    await waitFor('the order filled', async () => ((await order()).status === 'fulfilled' ? true : null), 60_000);
    assert.ok(answered > 0, 'the attackers did answer');
    const won = await waitFor('its winning competition', async () => {
      const c = await competitions.latestForOrder(uid);
      return c?.solutions.some((s) => s.isWinner && s.orders.some((o) => o.id === uid)) ? c : null;
    });
    assert.equal(won.solutions.find((s) => s.isWinner)!.solver, 'amm-router', 'an honest engine settled it');
    assert.ok(BigInt((await order()).executedBuyAmount) < (market * 103n) / 100n, 'not at the attackers’ promise');

    // the record of that auction, as the v1 API serves it: both attacks listed and filtered out
    const v1 = (await call(app.baseUrl, 'GET', `/devnet/api/v1/solver_competition/${won.auctionId}`)).body as { solutions: Array<{ solver: string; filteredOut: boolean; isWinner: boolean }> };
    for (const engine of ['thief', 'approver']) {
      const listed = v1.solutions.find((s) => s.solver === engine);
      assert.ok(listed, `${engine} is on the record`);
      assert.equal(listed.filteredOut, true, `${engine} filtered out`);
      assert.equal(listed.isWinner, false);
    }
    const stored = new Map(won.solutions.map((s) => [s.solver, s]));
    assert.match(stored.get('thief')!.filterReason ?? '', /^simulation: the settlement's balance of 0x[0-9a-f]{40} would fall by 100000000000000000/);
    assert.match(stored.get('approver')!.filterReason ?? '', /allowance to 0x0{35}a77ac, which is not a known liquidity spender/);
    await waitFor('the thief told simulationFailed', async () => engines.notified('thief').some((n) => n.auctionId === String(won.auctionId) && n.kind === 'simulationFailed'));

    // after a later block: nothing reached the attacker and the buffer is whole
    await waitFor('a later block', async () => ((await app.networks[0]!.client.getBlockNumber({ cacheTime: 0 })) > BigInt(won.startBlock) + 1n ? true : null));
    assert.equal(await read('balanceOf', [ATTACKER]), 0n, 'the attacker received no WETH');
    assert.equal(await read('allowance', [settlement, ATTACKER]), 0n, 'no allowance to the attacker');
    assert.ok((await read('balanceOf', [settlement])) >= buffer, 'the settlement buffer did not fall');
  });

  it('an order only the thief claims to fill is not excluded by the thief’s word (its failures are probed with the node’s own engines)', async () => {
    // out of the market: the built-in engines propose nothing, the attackers promise 15 % above the pool, so nothing
    // wins and the thief's refused solution is the best that failed. Asked again on the order alone, the thief would
    // fail again and the order would be excluded (and its tokens blamed) — an honest order held out by an engine.
    const trader = await t.freshAccount([{ token: 'WETH', amount: '2' }]);
    const market = await t.marketOut(E18, [t.tokens.WETH, t.tokens.USDC]);
    const uid = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: E18, buyAmount: (market * 110n) / 100n, kind: 'sell' });
    quotes.set(uid.toLowerCase() as Hex, (market * 115n) / 100n);
    const competitions = app.auctionLoops.get('devnet')!.competitions;
    const refused = new Set<number>();
    let won = false;
    await waitFor('three auctions in which the thief’s solution for the order was refused by the simulation', async () => {
      const c = await competitions.latestForOrder(uid);
      const thief = c?.solutions.find((s) => s.solver === 'thief' && s.orders.some((o) => o.id === uid));
      if (c && thief?.filterReason?.startsWith('simulation:')) {
        won ||= c.solutions.some((s) => s.isWinner);
        refused.add(c.auctionId);
      }
      return refused.size >= 3;
    }, 90_000);
    assert.equal(won, false, 'nothing won those auctions');
    const events = (await app.database.db.selectFrom('order_events').select(['label', 'reason']).where('order_uid', '=', toBytes(uid)).execute()).map((e) => `${e.label}:${e.reason ?? ''}`);
    assert.ok(!events.some((e) => e.startsWith('filtered:simulation_failed')), `not excluded: ${events.join(', ')}`);
    const auction = (await call(app.baseUrl, 'GET', '/devnet/api/v1/auction')).body as { orders: Array<{ uid: string }> };
    assert.ok(auction.orders.some((o) => o.uid === uid.toLowerCase()), 'still in the auction');
    quotes.delete(uid.toLowerCase() as Hex);
  });

  it('serves no solver-engine route without SOLVER_ENGINE_TOKEN', async () => {
    for (const path of ['/solvers/amm-router/solve', '/devnet/solvers/cow-matcher/solve']) {
      const res = await call(app.baseUrl, 'POST', path, { orders: [] });
      assert.equal(res.status, 404, path);
    }
  });
});
