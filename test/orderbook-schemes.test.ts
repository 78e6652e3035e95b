/**
 * The signing schemes beyond eip712 on the real devnet: ethsign (personal_sign of the digest), eip1271
 * (`isValidSignature` on the devnet's smart wallet), presign (`setPreSignature` through the real settlement,
 * seen by the indexer).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { orderDigest, orderDomain } from '../src/protocol/index.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder, uidOf, DEVNET_CHAIN_ID } from './fixtures/orders.js';

describe('signing schemes', () => {
  let app: TestApp;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let traderKey: Hex;
  let weth: Hex;
  let usdc: Hex;

  before(async () => {
    app = await startTestApp();
    const d = app.devnet!.describe();
    traderKey = d.accounts[0]!.privateKey;
    trader = privateKeyToAccount(traderKey);
    weth = d.tokens[0]!.address.toLowerCase() as Hex;
    usdc = d.tokens[1]!.address.toLowerCase() as Hex;
  });
  after(async () => {
    await app?.stop();
  });

  it('ethsign: personal_sign of the order digest, with and without from', async () => {
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n });
    const signature = await signOrder(trader, order, 'ethsign');
    const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'ethsign'));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body, uidOf(order, trader.address.toLowerCase() as Hex));
    const stored = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`);
    assert.equal(stored.body.signingScheme, 'ethsign');
    assert.equal(stored.body.owner, trader.address.toLowerCase());
  });

  it('eip1271: the devnet smart wallet accepts its owner’s signature of the digest; anything else is InvalidSignature', async () => {
    const wallet = app.devnet!.deployment.contracts.smartWallet.toLowerCase() as Hex;
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n });
    const digest = orderDigest(order, orderDomain(DEVNET_CHAIN_ID));
    const signature = await sign({ hash: digest, privateKey: traderKey, to: 'hex' });
    const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'eip1271', wallet));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body, uidOf(order, wallet));
    const stored = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`);
    assert.equal(stored.body.signingScheme, 'eip1271');
    assert.equal(stored.body.owner, wallet);
    assert.equal(stored.body.signature, signature);

    const other = await sign({ hash: digest, privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', to: 'hex' });
    const order2 = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 2n * 10n ** 15n });
    const bad = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order2, other, 'eip1271', wallet));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorType, 'InvalidSignature');
    const noFrom = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order2, other, 'eip1271'));
    assert.equal(noFrom.body.errorType, 'MissingFrom');
  });

  it('presign: waits as presignaturePending until setPreSignature is indexed, then open; cancellable only on chain', async () => {
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 3n * 10n ** 15n });
    const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, '0x', 'presign', trader.address));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const uid = res.body as Hex;
    const pending = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`);
    assert.equal(pending.body.status, 'presignaturePending');
    assert.equal(pending.body.signature, '0x');

    const offchainCancel = await call(app.baseUrl, 'DELETE', `/devnet/api/v1/orders/${uid}`, { signature: '0x' + '11'.repeat(65), signingScheme: 'eip712' });
    assert.equal(offchainCancel.body.errorType, 'OnChainOrder');

    const wallet = createWalletClient({ account: trader, transport: http(app.devnet!.rpcUrl) });
    await wallet.writeContract({
      chain: null,
      address: app.devnet!.deployment.contracts.settlement,
      abi: [{ type: 'function', name: 'setPreSignature', stateMutability: 'nonpayable', inputs: [{ name: 'orderUid', type: 'bytes' }, { name: 'signed', type: 'bool' }], outputs: [] }],
      functionName: 'setPreSignature',
      args: [uid, true],
    });
    let status = 'presignaturePending';
    for (let i = 0; i < 60 && status !== 'open'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body.status;
    }
    assert.equal(status, 'open', 'the indexer saw PreSignature within a few blocks');
  });
});
