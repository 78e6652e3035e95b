/**
 * GET /readyz says what each served network indexes (issue 14 point 13): the devnet indexes its tokens from
 * block 0, so their top holders come from our own index, and its pools and factory; a real chain indexes no token
 * transfers (nothing would read them), which the same summary shows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { indexingSummary, type ChainNetwork } from '../src/chain/network.js';

describe('/readyz: what is indexed', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app?.stop();
  });

  it('lists, per network, the settlement, the tokens whose holders are served from the index, the pools and the factory', async () => {
    const res = await fetch(`${app.baseUrl}/readyz`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string; indexed: Record<string, { settlement: string; holderTokens: string[]; pools: number; factory: string | null }> };
    const d = app.devnet!.describe();
    const devnet = body.indexed.devnet;
    assert.ok(devnet, `devnet in ${JSON.stringify(body)}`);
    assert.equal(devnet.settlement, d.contracts.settlement.toLowerCase());
    assert.deepEqual(new Set(devnet.holderTokens), new Set(d.tokens.map((t) => t.address.toLowerCase())));
    assert.ok(devnet.pools > 0, 'the devnet pools are followed');
    assert.equal(devnet.factory, app.networks[0]!.amm!.factory.toLowerCase());
  });

  it('a network indexed from the head follows no token transfers and no factory', () => {
    const real = { ...app.networks[0]!, devnet: null, trackedTokens: [], trackedPools: [] } as ChainNetwork;
    assert.deepEqual(indexingSummary(real), { settlement: real.settlement, holderTokens: [], pools: 0, factory: null });
  });
});
