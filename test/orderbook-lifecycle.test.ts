/**
 * Order-book behaviour beyond a single submission, on the real devnet: app-data upload rules, order
 * replacement through app-data `metadata.replacedOrder`, the cap on open out-of-market limit orders, and an
 * on-chain `invalidateOrder` cancelling an order once indexed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { appDataHash } from '../src/protocol/index.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';

describe('order lifecycle', () => {
  let app: TestApp;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let other: ReturnType<typeof privateKeyToAccount>;
  let weth: Hex;
  let usdc: Hex;
  let dai: Hex;
  const submit = (body: unknown) => call(app.baseUrl, 'POST', '/devnet/api/v1/orders', body);

  before(async () => {
    app = await startTestApp();
    const d = app.devnet!.describe();
    trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    other = privateKeyToAccount(d.accounts[1]!.privateKey);
    weth = d.tokens.find((t) => t.symbol === 'WETH')!.address.toLowerCase() as Hex;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
    dai = d.tokens.find((t) => t.symbol === 'DAI')!.address.toLowerCase() as Hex;
  });
  after(async () => {
    await app?.stop();
  });

  describe('app data', () => {
    it('201 when new, 200 for the same bytes, hashes the exact bytes (whitespace matters)', async () => {
      const doc = '{ "appCode": "spaced" }';
      const hash = keccak256(toHex(doc));
      const first = await call(app.baseUrl, 'PUT', `/devnet/api/v1/app_data/${hash}`, { fullAppData: doc });
      assert.equal(first.status, 201);
      assert.equal(first.body, hash);
      assert.equal((await call(app.baseUrl, 'PUT', `/devnet/api/v1/app_data/${hash}`, { fullAppData: doc })).status, 200);
      const got = await call(app.baseUrl, 'GET', `/devnet/api/v1/app_data/${hash}`);
      assert.equal(got.body.fullAppData, doc);
      assert.notEqual(appDataHash('{"appCode":"spaced"}'), hash);
    });
    it('400 AppDataHashMismatch, 400 AppDataInvalid, 413 over 8192 bytes, 404 unknown, {} for the zero hash', async () => {
      const mismatch = await call(app.baseUrl, 'PUT', `/devnet/api/v1/app_data/0x${'11'.repeat(32)}`, { fullAppData: '{}' });
      assert.equal(mismatch.status, 400);
      assert.equal(mismatch.body.errorType, 'AppDataHashMismatch');
      const invalid = await call(app.baseUrl, 'PUT', '/devnet/api/v1/app_data', { fullAppData: '[1,2' });
      assert.equal(invalid.body.errorType, 'AppDataInvalid');
      const big = await call(app.baseUrl, 'PUT', '/devnet/api/v1/app_data', { fullAppData: JSON.stringify({ pad: 'x'.repeat(8200) }) });
      assert.equal(big.status, 413);
      assert.equal(big.body.errorType, 'PayloadTooLarge');
      const unknown = await call(app.baseUrl, 'GET', `/devnet/api/v1/app_data/0x${'22'.repeat(32)}`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.errorType, 'NotFound');
      const zero = await call(app.baseUrl, 'GET', `/devnet/api/v1/app_data/0x${'00'.repeat(32)}`);
      assert.equal(zero.body.fullAppData, '{}');
    });
  });

  it('replaces an order named in app-data metadata.replacedOrder: old cancelled, new open, atomically', async () => {
    const old = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n });
    const oldUid = (await submit(orderBody(old, await signOrder(trader, old), 'eip712', trader.address))).body as Hex;
    const doc = JSON.stringify({ appCode: 'test', metadata: { replacedOrder: { uid: oldUid } } });
    const replacement = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 2n * 10n ** 16n, appData: appDataHash(doc) });
    const body = { ...orderBody(replacement, await signOrder(trader, replacement), 'eip712', trader.address), appData: doc };
    const res = await submit(body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${oldUid}`)).body.status, 'cancelled');
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`)).body.status, 'open');

    // another owner cannot replace it
    const doc2 = JSON.stringify({ appCode: 'test', metadata: { replacedOrder: { uid: res.body } } });
    const hijack = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 3n * 10n ** 16n, appData: appDataHash(doc2) });
    const refused = await submit({ ...orderBody(hijack, await signOrder(other, hijack), 'eip712', other.address), appData: doc2 });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.errorType, 'WrongOwner');
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`)).body.status, 'open', 'nothing changed');
  });

  it('caps open out-of-market limit orders at 10 per owner (TooManyLimitOrders); in-market ones do not count', async () => {
    const uids: Hex[] = [];
    for (let i = 0; i < 10; i++) {
      // asking for 1e12 DAI for 0.001 WETH: far outside the market
      const order = makeOrder({ sellToken: weth, buyToken: dai, sellAmount: 10n ** 15n + BigInt(i), buyAmount: 10n ** 30n });
      const res = await submit(orderBody(order, await signOrder(other, order), 'eip712', other.address));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      uids.push(res.body);
    }
    const eleventh = makeOrder({ sellToken: weth, buyToken: dai, sellAmount: 10n ** 15n + 99n, buyAmount: 10n ** 30n });
    const refused = await submit(orderBody(eleventh, await signOrder(other, eleventh), 'eip712', other.address));
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errorType, 'TooManyLimitOrders');
    const inMarket = makeOrder({ sellToken: weth, buyToken: dai, sellAmount: 10n ** 15n + 100n, buyAmount: 1n });
    assert.equal((await submit(orderBody(inMarket, await signOrder(other, inMarket), 'eip712', other.address))).status, 201);
  });

  it('an on-chain invalidateOrder by the owner cancels the order once indexed (invalidated, onchainUser)', async () => {
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 4n * 10n ** 16n });
    const uid = (await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address))).body as Hex;
    const wallet = createWalletClient({ account: trader, transport: http(app.devnet!.rpcUrl) });
    await wallet.writeContract({
      chain: null,
      address: app.devnet!.deployment.contracts.settlement,
      abi: [{ type: 'function', name: 'invalidateOrder', stateMutability: 'nonpayable', inputs: [{ name: 'orderUid', type: 'bytes' }], outputs: [] }],
      functionName: 'invalidateOrder',
      args: [uid],
    });
    let record: any = null;
    for (let i = 0; i < 60; i++) {
      record = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body;
      if (record.status === 'cancelled') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(record.status, 'cancelled');
    assert.equal(record.invalidated, true);
    assert.equal(record.onchainUser, trader.address.toLowerCase());
  });
});
