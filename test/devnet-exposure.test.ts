/**
 * Issue 14, point 9: a node with the devnet next to a real chain (here a second anvil with chain id 100 standing
 * in for a Gnosis Chain node) serves the real chain as the default network and hides the devnet's key listing
 * and faucet unless DEVNET_EXPOSE=true; and (issue 19) the devnet's order book and "Trade a CoW" with it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findFreePort } from '../src/chain/devnet/index.js';
import { startAnvil, type AnvilProcess } from '../src/chain/devnet/anvil-process.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { privateKeyToAccount } from 'viem/accounts';
import type { Address } from 'viem';
import { affiliateTypedData } from '../src/aux/affiliate/affiliate-code.js';

describe('devnet next to a real chain', () => {
  let gnosis: AnvilProcess;
  let app: TestApp;
  before(async () => {
    gnosis = await startAnvil({ port: await findFreePort(), noMining: false, chainId: 100 });
    app = await startTestApp({ DEVNET: 'true', RPC_URL_100: gnosis.rpcUrl });
  });
  after(async () => {
    await app?.stop();
    await gnosis?.stop();
  });

  it('the real chain is the default network, not the devnet', () => {
    assert.deepEqual(Object.keys(app.urls.orderBook).sort(), ['default: xdai', 'xdai']);
  });

  it('/devnet (private keys) and the faucet are not served next to a real chain', async () => {
    assert.equal((await call(app.baseUrl, 'GET', '/devnet')).status, 404);
    assert.equal((await call(app.baseUrl, 'POST', '/devnet/faucet', { address: '0x' + '11'.repeat(20), token: 'WETH', amount: '1' })).status, 404);
  });

  it('nor is the devnet\'s order book or its "Trade a CoW" (both act with the public test keys); the real chain\'s are', async () => {
    assert.equal((await call(app.baseUrl, 'GET', '/xdai/api/v1/version')).status, 200, 'the positive witness: the real chain is served');
    assert.equal((await call(app.baseUrl, 'GET', '/devnet/api/v1/version')).status, 404);
    assert.equal((await call(app.baseUrl, 'GET', '/devnet/api/v1/auction')).status, 404);
    const cow = await call(app.baseUrl, 'POST', '/dashboard/api/devnet/trade-a-cow');
    assert.equal(cow.status, 404, JSON.stringify(cow.body));
  });

  it('an affiliate registration signature counts only on the counting chain: a smart wallet that exists only on the devnet cannot register', async () => {
    const d = app.devnet!.describe();
    const owner = privateKeyToAccount(d.accounts.find((a) => a.role === 'trader')!.privateKey);
    const smartWallet = d.contracts.smartWallet as Address;
    const signedMessage = await owner.signTypedData(affiliateTypedData('CoW Swap Affiliate', smartWallet, 'DEVNET-ONLY'));
    const refused = await call(app.baseUrl, 'POST', `/affiliate/${smartWallet}`, { walletAddress: smartWallet, code: 'DEVNET-ONLY', signedMessage });
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    // the positive witness: an EOA's signature verifies on the real chain too
    const eoaSigned = await owner.signTypedData(affiliateTypedData('CoW Swap Affiliate', owner.address, 'EOA-ANYWHERE'));
    const ok = await call(app.baseUrl, 'POST', `/affiliate/${owner.address}`, { walletAddress: owner.address, code: 'EOA-ANYWHERE', signedMessage: eoaSigned });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });
});
