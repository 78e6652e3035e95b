/**
 * The node the OpenAPI fuzz runs against: one test app on the devnet, its document, and real values to put in
 * requests (tokens, accounts, placed orders, uploaded app data) plus known-good requests per operation (signed
 * orders, subscriptions and affiliate codes; quotes; a simulation run) for the generator to start from.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { keccak256, toBytes, type Hex } from 'viem';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { call, makeOrder, orderBody, signOrder, uidOf, DEVNET_CHAIN_ID } from '../fixtures/orders.js';
import { orderCancellationsTypedData, orderDomain } from '../../src/protocol/index.js';
import { affiliateTypedData } from '../../src/aux/affiliate/affiliate-code.js';
import { subscribeTypedData } from '../../src/aux/notifications/subscription-signatures.js';
import type { FuzzContext, OpenApiDocument, RequestParts } from './openapi-fuzz.js';

export interface FuzzTarget {
  app: TestApp;
  doc: OpenApiDocument;
  ctx: FuzzContext;
}

/** `env`: extra configuration of the node (e.g. `{ AUCTIONS: 'true' }` to have auctions and competitions). */
export async function startFuzzTarget(env: Record<string, string> = {}): Promise<FuzzTarget> {
  const app = await startTestApp(env);
  try {
    const docRes = await call(app.baseUrl, 'GET', '/docs/json');
    if (docRes.status !== 200) throw new Error(`GET /docs/json answered ${docRes.status}`);
    const d = app.devnet!.describe();
    const traders = d.accounts.slice(0, 3).map((a) => privateKeyToAccount(a.privateKey));
    const trader = traders[0]!;
    const tokens = d.tokens.map((t) => t.address);
    const [weth, usdc] = tokens as [Hex, Hex];
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n });
    const placed = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    if (placed.status !== 201) throw new Error(`placing the fuzz's order answered ${placed.status}: ${JSON.stringify(placed.body)}`);
    const fullAppData = '{"appCode":"fuzz"}';
    const appData = await call(app.baseUrl, 'PUT', '/devnet/api/v1/app_data', { fullAppData });
    const simulated = await call(app.baseUrl, 'POST', '/31337/simulation/simulateBundle', [{ from: trader.address, to: usdc, input: '0x' }]);
    const runId = String(simulated.body?.link ?? '').split('/').pop();

    // signed requests: each is accepted once (later copies are duplicates, which is fine)
    const signedOrders: Partial<RequestParts>[] = [];
    for (let i = 0; i < 20; i++) {
      const owner = traders[i % traders.length]!;
      const o = makeOrder({ sellToken: i % 2 ? usdc : weth, buyToken: i % 2 ? weth : usdc, sellAmount: 10n ** 6n + BigInt(i), buyAmount: 1n, partiallyFillable: i % 3 === 0, kind: i % 4 === 0 ? 'buy' : 'sell' });
      signedOrders.push({ body: orderBody(o, await signOrder(owner, o, i % 5 === 0 ? 'ethsign' : 'eip712'), i % 5 === 0 ? 'ethsign' : 'eip712', owner.address) });
    }
    // placed orders and their signed cancellations (DELETE /orders/{UID} signs the batch type too, as upstream): each cancellation succeeds once
    const cancellations: Partial<RequestParts>[] = [];
    const batchCancellations: Partial<RequestParts>[] = [];
    const domain = orderDomain(DEVNET_CHAIN_ID);
    for (let i = 0; i < 4; i++) {
      const o = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 2n * 10n ** 6n + BigInt(i), buyAmount: 1n });
      const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(o, await signOrder(trader, o), 'eip712', trader.address));
      if (res.status !== 201) throw new Error(`placing an order to cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
      const uid = uidOf(o, trader.address);
      if (i < 2) cancellations.push({ path: { UID: uid }, body: { signature: await trader.signTypedData(orderCancellationsTypedData([uid], domain)), signingScheme: 'eip712' } });
      else batchCancellations.push({ body: { orderUids: [uid], signature: await trader.signTypedData(orderCancellationsTypedData([uid], domain)), signingScheme: 'eip712' } });
    }
    const deadline = Math.floor(Date.now() / 1000) + 24 * 3600;
    const subscriptions: Partial<RequestParts>[] = [];
    const affiliates: Partial<RequestParts>[] = [];
    for (const [i, owner] of traders.entries()) {
      const target = `http://127.0.0.1:9/fuzz-${i}`;
      const signature = await owner.signTypedData(subscribeTypedData({ account: owner.address, channel: 'webhook', target, deadline }));
      subscriptions.push({ path: { account: owner.address }, body: { channel: 'webhook', target, deadline, signature } });
      const code = `FUZZ-${i}`;
      const signedMessage = await owner.signTypedData(affiliateTypedData('CoW Swap Affiliate', owner.address, code));
      affiliates.push({ path: { address: owner.address }, body: { walletAddress: owner.address, code, signedMessage } });
    }
    const quote = (body: Record<string, unknown>): Partial<RequestParts> => ({ body: { sellToken: weth, buyToken: usdc, from: trader.address, ...body } });
    const examples: Record<string, Partial<RequestParts>[]> = {
      'POST /api/v1/quote': [
        quote({ kind: 'sell', sellAmountBeforeFee: '1000000000000000000' }),
        quote({ kind: 'sell', sellAmountAfterFee: '50000000000000000', priceQuality: 'fast' }),
        quote({ kind: 'buy', buyAmountAfterFee: '1000000', validFor: 600, appData: fullAppData }),
        { body: { sellToken: usdc, buyToken: weth, from: trader.address, kind: 'sell', sellAmountBeforeFee: '1000000000' } },
      ],
      'POST /api/v1/orders': signedOrders,
      'PUT /api/v1/app_data': [{ body: { fullAppData: '{"appCode":"fuzz-put"}' } }, { body: { fullAppData } }],
      'PUT /api/v1/app_data/{hash}': ['{"appCode":"fuzz-hash"}', '{"version":"1.3.0","metadata":{}}'].map((doc) => ({ path: { hash: keccak256(toBytes(doc)) }, body: { fullAppData: doc } })),
      'POST /api/v1/orders/by_uids': [{ body: [placed.body] }],
      'DELETE /api/v1/orders/{UID}': cancellations,
      'DELETE /api/v1/orders': batchCancellations,
      'POST /accounts/{account}/subscriptions': subscriptions,
      'POST /affiliate/{address}': affiliates,
      'POST /{chainId}/simulation/simulateBundle': [{ path: { chainId: '31337' }, body: [{ from: trader.address, to: usdc, input: '0x' }] }],
      'POST /devnet/faucet': [{ body: { address: trader.address, token: 'USDC', amount: '10' } }],
      ...(runId ? { 'GET /{chainId}/simulation/{id}': [{ path: { chainId: '31337', id: runId } }] } : {}),
    };
    const ctx: FuzzContext = {
      chainIds: ['31337', 'devnet', '1', 'mainnet'],
      networks: ['devnet'],
      tokens: [...tokens, '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'],
      accounts: traders.map((a) => a.address),
      orderUids: [placed.body as string],
      hashes: [String(appData.body), '0x' + '00'.repeat(32)],
      examples,
    };
    return { app, doc: docRes.body as OpenApiDocument, ctx };
  } catch (err) {
    await app.stop();
    throw err;
  }
}
