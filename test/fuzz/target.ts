/**
 * The node the OpenAPI fuzz runs against: one test app on the devnet, its document, and real values to put in
 * requests (tokens, accounts, one placed order, one uploaded app-data hash).
 */
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from '../fixtures/orders.js';
import type { FuzzContext, OpenApiDocument } from './openapi-fuzz.js';

export interface FuzzTarget {
  app: TestApp;
  doc: OpenApiDocument;
  ctx: FuzzContext;
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const app = await startTestApp();
  try {
    const docRes = await call(app.baseUrl, 'GET', '/docs/json');
    if (docRes.status !== 200) throw new Error(`GET /docs/json answered ${docRes.status}`);
    const d = app.devnet!.describe();
    const trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    const tokens = d.tokens.map((t) => t.address);
    const order = makeOrder({ sellToken: tokens[0] as Hex, buyToken: tokens[1] as Hex, sellAmount: 10n ** 16n, buyAmount: 1n });
    const placed = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
    if (placed.status !== 201) throw new Error(`placing the fuzz's order answered ${placed.status}: ${JSON.stringify(placed.body)}`);
    const appData = await call(app.baseUrl, 'PUT', '/devnet/api/v1/app_data', { fullAppData: '{"appCode":"fuzz"}' });
    const ctx: FuzzContext = {
      chainIds: ['31337', 'devnet', '1', 'mainnet'],
      networks: ['devnet'],
      tokens: [...tokens, '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'],
      accounts: d.accounts.slice(0, 3).map((a) => a.address),
      orderUids: [placed.body as string],
      hashes: [String(appData.body), '0x' + '00'.repeat(32)],
    };
    return { app, doc: docRes.body as OpenApiDocument, ctx };
  } catch (err) {
    await app.stop();
    throw err;
  }
}
