/**
 * The OpenAPI document at /docs/json is generated from the route schemas; real responses (successes and errors)
 * of a running node are validated against it, so the document cannot drift from what the server does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { privateKeyToAccount } from 'viem/accounts';
import { createPublicClient, encodeFunctionData, erc20Abi, http, type Hex } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { openSse } from '../src/aux/balances/test-sse-client.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { affiliateTypedData } from '../src/aux/affiliate/affiliate-code.js';
import { subscribeTypedData, unsubscribeTypedData } from '../src/aux/notifications/subscription-signatures.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>> };

describe('OpenAPI document', () => {
  let app: TestApp;
  let doc: Doc;
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', true);
  /** `METHOD template` of every operation a real response was checked for */
  const exercised = new Set<string>();

  before(async () => {
    // an hour of market history: slippage needs the pools' reserves in at least two 5-minute buckets, which a chain
    // deployed just now (no history) has only once the clock crosses a bucket boundary (up to 5 minutes later)
    app = await startTestApp({ DEVNET_HISTORY_HOURS: '1' });
    const res = await call(app.baseUrl, 'GET', '/docs/json');
    assert.equal(res.status, 200);
    doc = res.body;
  });
  after(async () => {
    await app?.stop();
  });

  function templateFor(path: string): string | undefined {
    const clean = path.split('?')[0]!;
    const params = (t: string) => (t.match(/\{/g) ?? []).length;
    return Object.keys(doc.paths)
      .filter((template) => new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$').test(clean))
      .sort((a, b) => params(a) - params(b))[0];
  }

  /** calls the server and checks the answer against the documented response of that status */
  async function checked_call(method: string, path: string, body?: unknown) {
    const res = await call(app.baseUrl, method, path, body);
    const template = templateFor(path);
    assert.ok(template, `no documented path for ${path}`);
    const op = doc.paths[template!]![method.toLowerCase()];
    assert.ok(op, `${method} ${template} is not documented`);
    const documented = op!.responses[String(res.status)];
    assert.ok(documented, `${method} ${template} answered ${res.status}, which is not documented (${JSON.stringify(res.body).slice(0, 200)})`);
    const contentType = res.headers.get('content-type') ?? '';
    const mediaType = contentType.split(';')[0]!.trim();
    if (documented!.content && mediaType) {
      assert.ok(documented!.content[mediaType], `${method} ${template} ${res.status} answers ${mediaType}, the document says ${Object.keys(documented!.content).join(', ')}`);
    }
    if (contentType.startsWith('application/json')) {
      // a JSON answer must have a documented schema to be checked against: an undocumented shape is a defect
      const media = documented!.content?.['application/json'];
      assert.ok(media?.schema, `${method} ${template} ${res.status} answers JSON but documents no JSON schema`);
      const validate = ajv.compile(media!.schema);
      assert.ok(validate(res.body), `${method} ${path} ${res.status} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`);
    }
    // the root /api/... routes are the default network's (devnet) routes
    exercised.add(`${method.toUpperCase()} ${template!.startsWith('/api/') ? `/devnet${template}` : template}`);
    return res;
  }

  it('documents every order-book path under the network prefix and at the root', () => {
    for (const p of ['/devnet/api/v1/quote', '/api/v1/quote', '/devnet/api/v1/orders', '/devnet/api/v1/orders/{UID}', '/devnet/api/v2/trades', '/devnet/api/v1/app_data/{hash}', '/devnet', '/healthz', '/readyz']) {
      assert.ok(doc.paths[p], `missing ${p}`);
    }
  });

  it('real responses match it', async () => {
    const d = app.devnet!.describe();
    const trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    const weth = d.tokens[0]!.address as Hex;
    const usdc = d.tokens[1]!.address as Hex;
    await checked_call('GET', '/healthz');
    await checked_call('GET', '/readyz');
    await checked_call('GET', '/metrics');
    await checked_call('GET', '/devnet');
    await checked_call('PUT', '/devnet/api/v1/app_data', { fullAppData: '{"appCode":"openapi"}' });
    await checked_call('PUT', `/devnet/api/v1/app_data/0x${'00'.repeat(32)}`, { fullAppData: '{"x":1}' });
    await checked_call('GET', `/devnet/api/v1/app_data/0x${'12'.repeat(32)}`);
    await checked_call('POST', '/devnet/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: '1000000000000000000' });
    await checked_call('POST', '/devnet/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: '1' });
    await checked_call('POST', '/api/v1/quote', { sellToken: weth, buyToken: usdc, from: trader.address, kind: 'buy', buyAmountAfterFee: '1000000', priceQuality: 'fast' });
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n });
    const created = await checked_call('POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    assert.equal(created.status, 201);
    const uid = created.body as string;
    await checked_call('POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    await checked_call('GET', `/devnet/api/v1/orders/${uid}`);
    await checked_call('GET', `/devnet/api/v1/orders/${uid}/status`);
    await checked_call('GET', `/devnet/api/v1/orders/0x${'00'.repeat(56)}`);
    await checked_call('POST', '/devnet/api/v1/orders/by_uids', [uid]);
    await checked_call('GET', `/devnet/api/v1/account/${trader.address}/orders?limit=5`);
    await checked_call('GET', `/devnet/api/v1/account/${trader.address}/orders?limit=0`);
    await checked_call('GET', `/devnet/api/v1/trades?owner=${trader.address}`);
    await checked_call('GET', `/devnet/api/v2/trades?orderUid=${uid}&limit=10`);
    await checked_call('GET', `/devnet/api/v1/transactions/0x${'ab'.repeat(32)}/orders`);
    await checked_call('GET', `/devnet/api/v1/users/${trader.address}/total_surplus`);
    await checked_call('GET', `/devnet/api/v1/token/${usdc}/native_price`);
    await checked_call('DELETE', `/devnet/api/v1/orders/${uid}`, { signature: '0x' + '11'.repeat(65), signingScheme: 'eip712' });
    await checked_call('POST', '/devnet/faucet', { address: trader.address, token: 'USDC', amount: '10' });
    await checked_call('POST', '/devnet/faucet', { address: trader.address, token: 'NOPE' });
    // the devnet's control API (this node runs no auctions: auctions/run answers 409 AuctionsDisabled)
    const snapshot = await checked_call('POST', '/devnet/control/snapshot', {});
    await checked_call('POST', '/devnet/control/mine', { blocks: 2 });
    await checked_call('POST', '/devnet/control/mine', { blocks: 0 });
    await checked_call('POST', '/devnet/control/time', { increase: 60 });
    await checked_call('POST', '/devnet/control/auctions', { paused: true });
    await checked_call('POST', '/devnet/control/auctions', { paused: false });
    await checked_call('POST', '/devnet/control/auctions/run', {});
    await checked_call('POST', '/devnet/control/revert', { id: (snapshot.body as { id: string }).id });
    await checked_call('POST', '/devnet/control/revert', { id: '424242' });
    // auxiliary API, wired into the same node
    await checked_call('GET', `/31337/tokens/${weth}/usdPrice`);
    await checked_call('GET', '/devnet/tokens/-/usdPrice');
    await checked_call('GET', `/31337/tokens/0x1234/usdPrice`);
    await checked_call('GET', `/31337/tokens/${usdc}/topHolders`);
    await checked_call('GET', `/31337/accounts/${trader.address}/balances?tokens=${weth},${usdc},0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE`);
    await checked_call('GET', `/31337/accounts/${trader.address}/balances`);
    await checked_call('GET', `/31337/accounts/${trader.address}/partnerFees`);
    await checked_call('GET', '/31337/accounts/0x12/partnerFees');
    await checked_call('GET', `/424242/accounts/${trader.address}/partnerFees`);
    await checked_call('GET', `/31337/markets/${weth}-${usdc}/slippageTolerance`);
    await checked_call('POST', '/31337/yield/pools', []);
    await checked_call('GET', '/31337/yield/pools-average-apr');
    await checked_call('POST', '/31337/simulation/simulateBundle', [{ from: trader.address, to: usdc, input: '0x' }]);
    await checked_call('POST', '/31337/simulation/simulateBundle', [{ from: 'nope', to: usdc, input: '0x' }]);
    const simulated = await checked_call('POST', '/31337/simulation/simulateBundle', [{ from: trader.address, to: usdc, input: '0x' }]);
    const runId = String(simulated.body.link ?? '').split('/').pop();
    if (runId) await checked_call('GET', `/31337/simulation/${runId}`);
    await checked_call('GET', '/31337/simulation/not-a-run');
    // the rest of the order book: version, the auction (none while auctions are off), competitions, batch cancel
    await checked_call('GET', '/devnet/api/v1/version');
    await checked_call('GET', '/devnet/api/v1/auction');
    for (const v of ['v1', 'v2']) {
      await checked_call('GET', `/devnet/api/${v}/solver_competition/latest`);
      await checked_call('GET', `/devnet/api/${v}/solver_competition/1`);
      await checked_call('GET', `/devnet/api/${v}/solver_competition/by_tx_hash/0x${'ab'.repeat(32)}`);
    }
    await checked_call('DELETE', '/devnet/api/v1/orders', { orderUids: [], signature: '0x', signingScheme: 'eip712' });
    // affiliate program (issue 10)
    const affiliateSignature = await trader.signTypedData(affiliateTypedData('CoW Swap Affiliate', trader.address, 'OPENAPI'));
    await checked_call('POST', `/affiliate/${trader.address}`, { walletAddress: trader.address, code: 'openapi', signedMessage: affiliateSignature });
    await checked_call('POST', `/affiliate/${trader.address}`, { walletAddress: trader.address, code: 'openapi', signedMessage: affiliateSignature });
    await checked_call('POST', `/affiliate/${trader.address}`, { walletAddress: trader.address, code: 'other', signedMessage: '0x1234' });
    await checked_call('POST', `/affiliate/${usdc}`, { walletAddress: usdc, code: 'NEW-CODE', signedMessage: '0x1234' });
    await checked_call('GET', `/affiliate/${trader.address}`);
    await checked_call('GET', `/affiliate/${usdc}`);
    await checked_call('GET', `/affiliate/affiliate-stats/${trader.address}`);
    await checked_call('GET', `/affiliate/trader-stats/${trader.address}`);
    await checked_call('GET', '/ref-codes/openapi');
    await checked_call('GET', '/ref-codes/x');
    // the dashboard's reads and Trade a CoW (issue 13)
    for (const path of [
      '/dashboard/api/networks', '/dashboard/api/devnet/overview', '/dashboard/api/nowhere/overview', '/dashboard/api/devnet/competitions?limit=5',
      '/dashboard/api/devnet/orders', '/dashboard/api/devnet/orders?limit=0', '/dashboard/api/devnet/trades', `/dashboard/api/devnet/orders/${uid}/lifecycle`,
      `/dashboard/api/devnet/orders/0x${'00'.repeat(56)}/lifecycle`, '/dashboard/api/devnet/market', `/dashboard/api/devnet/markets/${weth}-${usdc}/history`,
      `/dashboard/api/devnet/markets/${weth}-${weth}/history`, `/dashboard/api/devnet/accounts/${trader.address}/notifications`,
    ]) await checked_call('GET', path);
    // the native asset against its own wrapped token: a 400, not a 500 (found by the fuzz)
    const nativeHistory = await checked_call('GET', `/dashboard/api/devnet/markets/0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE-${weth}/history`);
    assert.equal(nativeHistory.status, 400, JSON.stringify(nativeHistory.body));
    await checked_call('POST', '/dashboard/api/devnet/trade-a-cow');
    // hooks analytics
    await checked_call('GET', '/hooks?blockchain=devnet&period=last%201d&limit=10');
    await checked_call('GET', '/hooks?blockchain=devnet&period=last%202d');
    // notifications (issue 11)
    await checked_call('GET', `/accounts/${trader.address}/notifications?limit=5`);
    await checked_call('GET', '/accounts/0x1234/notifications');
    const deadline = Math.floor(Date.now() / 1000) + 600;
    const target = 'http://127.0.0.1:9/openapi';
    const signed = await trader.signTypedData(subscribeTypedData({ account: trader.address, channel: 'webhook', target, deadline }));
    const sub = await checked_call('POST', `/accounts/${trader.address}/subscriptions`, { channel: 'webhook', target, deadline, signature: signed });
    assert.equal(sub.status, 201);
    await checked_call('POST', `/accounts/${trader.address}/subscriptions`, { channel: 'webhook', target, deadline, signature: signed });
    await checked_call('POST', `/accounts/${trader.address}/subscriptions`, { channel: 'webhook', target: `${target}/x`, deadline, signature: signed });
    await checked_call('POST', `/accounts/${trader.address}/subscriptions`, { channel: 'webhook', target, deadline: 1, signature: signed });
    await checked_call('GET', `/accounts/${trader.address}/subscriptions`);
    await checked_call('POST', `/accounts/${trader.address}/subscriptions/${sub.body.id}/confirm`, { code: 'not-the-code' });
    await checked_call('POST', `/accounts/${trader.address}/subscriptions/sub_nope/confirm`, { code: 'x' });
    const unsigned = await trader.signTypedData(unsubscribeTypedData({ account: trader.address, id: sub.body.id, deadline }));
    await checked_call('DELETE', `/accounts/${trader.address}/subscriptions/sub_nope`, { deadline, signature: unsigned });
    await checked_call('DELETE', `/accounts/${trader.address}/subscriptions/${sub.body.id}`, { deadline, signature: unsigned });
    await checked_call('DELETE', `/accounts/${trader.address}/subscriptions/${sub.body.id}`, { deadline, signature: unsigned });
    await checked_call('GET', '/notifications/vapid-public-key');
  });

  it('the market routes answer real values through the full node (not only documented shapes)', async () => {
    const d = app.devnet!.describe();
    const trader = privateKeyToAccount(d.accounts.find((a) => a.role === 'trader')!.privateKey);
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Hex;
    const [weth, usdc] = [token('WETH'), token('USDC')];
    const chain = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
    const balanceOf = (t: Hex, owner: Hex) => chain.readContract({ address: t, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
    const show = (r: { status: number; body: unknown }) => `${r.status} ${JSON.stringify(r.body).slice(0, 400)}`;

    // usdPrice: the devnet's market (about 3 000 USD per ETH) and USDC at about a dollar
    const ethUsd = await checked_call('GET', `/31337/tokens/${weth}/usdPrice`);
    const usdcUsd = await checked_call('GET', `/31337/tokens/${usdc}/usdPrice`);
    assert.equal(ethUsd.status, 200, show(ethUsd));
    assert.ok(ethUsd.body.price > 1_000 && ethUsd.body.price < 10_000, show(ethUsd));
    assert.ok(usdcUsd.body.price > 0.9 && usdcUsd.body.price < 1.1, show(usdcUsd));

    // balances (REST): each token's balance is the chain's balanceOf
    const rest = await checked_call('GET', `/31337/accounts/${trader.address}/balances?tokens=${weth},${usdc}`);
    assert.equal(rest.status, 200, show(rest));
    const entries = rest.body as Array<{ balance: string; token: { address: string; symbol: string } }>;
    assert.deepEqual(entries.map((e) => [e.token.symbol, e.balance]), [
      ['WETH', (await balanceOf(weth, trader.address)).toString()],
      ['USDC', (await balanceOf(usdc, trader.address)).toString()],
    ]);
    assert.ok(BigInt(entries[1]!.balance) > 0n, 'the dev trader holds USDC');
    // balances (the stream): its first message is the same state
    const stream = await openSse(`${app.baseUrl}/31337/accounts/${trader.address}/balances/sse?tokens=${weth},${usdc}`);
    try {
      const first = await stream.next((e) => e.event === 'message', 60_000);
      assert.deepEqual(JSON.parse(first.data), rest.body);
    } finally {
      stream.close();
    }

    // topHolders: the indexed holders of USDC, with the chain's balances, the trader among them
    let holders: Array<{ address: string; balance: string }> = [];
    for (let i = 0; i < 240 && !holders.some((h) => h.address.toLowerCase() === trader.address.toLowerCase()); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 250));
      const res = await checked_call('GET', `/31337/tokens/${usdc}/topHolders`);
      assert.equal(res.status, 200, show(res));
      holders = res.body as typeof holders;
    }
    const mine = holders.find((h) => h.address.toLowerCase() === trader.address.toLowerCase());
    assert.ok(mine, `the trader among ${JSON.stringify(holders).slice(0, 400)}`);
    assert.equal(mine.balance, (await balanceOf(usdc, trader.address)).toString());
    for (let i = 1; i < holders.length; i++) assert.ok(BigInt(holders[i - 1]!.balance) >= BigInt(holders[i]!.balance), 'largest first');

    // slippage: a positive tolerance in basis points, larger for a larger order (price impact)
    // (the pools' Sync events are indexed beside the holders: until the indexer reaches them the pair has no market data)
    let small = await checked_call('GET', `/31337/markets/${weth}-${usdc}/slippageTolerance?orderKind=sell&sellAmount=${10n ** 15n}`);
    for (let i = 0; i < 240 && small.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 250));
      small = await checked_call('GET', `/31337/markets/${weth}-${usdc}/slippageTolerance?orderKind=sell&sellAmount=${10n ** 15n}`);
    }
    const large = await checked_call('GET', `/31337/markets/${weth}-${usdc}/slippageTolerance?orderKind=sell&sellAmount=${100n * 10n ** 18n}`);
    assert.equal(small.status, 200, show(small));
    assert.ok(small.body.slippageBps > 0 && small.body.slippageBps <= 10_000, show(small));
    assert.ok(large.body.slippageBps > small.body.slippageBps, `${show(small)} vs ${show(large)}`);

    // yield: the devnet pools with their APR, and their average
    const pools = await checked_call('POST', '/31337/yield/pools', []);
    assert.equal(pools.status, 200, show(pools));
    assert.ok(Array.isArray(pools.body) && pools.body.length > 0, show(pools));
    const average = await checked_call('GET', '/31337/yield/pools-average-apr');
    assert.equal(average.status, 200, show(average));

    // simulateBundle: a real USDC transfer, with its exact balance changes, and the chain untouched
    const amount = 12_345n;
    const receiver = '0x000000000000000000000000000000000000c0de' as Hex;
    const before = await balanceOf(usdc, trader.address);
    const input = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [receiver, amount] });
    const sim = await checked_call('POST', '/31337/simulation/simulateBundle', [{ from: trader.address, to: usdc, input }]);
    assert.equal(sim.status, 200, show(sim));
    assert.equal(sim.body.status, true, show(sim));
    assert.deepEqual(sim.body.cumulativeBalancesDiff, { [trader.address.toLowerCase()]: { [usdc]: (-amount).toString() }, [receiver]: { [usdc]: amount.toString() } });
    assert.equal(await balanceOf(usdc, trader.address), before, 'a simulation does not touch the chain');
  });

  it('every documented operation was exercised above (or is listed here with the reason it cannot be)', () => {
    const notExercisedHere = new Map<string, string>([
      // streams: tested over a real connection in src/aux/balances/routes.test.ts
      ['GET /{chainId}/accounts/{userAddress}/balances/sse', 'an endless SSE stream'],
    ]);
    const documented: string[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
        // the root /api/v1 aliases are the default network's routes, exercised under /devnet
        if (template.startsWith('/api/') && doc.paths[`/devnet${template}`]) continue;
        documented.push(`${method.toUpperCase()} ${template}`);
      }
    }
    const missing = documented.filter((op) => !exercised.has(op) && !notExercisedHere.has(op));
    assert.deepEqual(missing, [], `documented operations with no real response checked against the document`);
  });
});
