/**
 * Two cooperating orders cannot halt AMM settlement (issue 19, major 9), on the real devnet with the built-in
 * engines. An owner with 1 WETH places two orders of 0.6 WETH each: either settles alone, together they overdraw
 * the owner. An honest order of another trader shares their pair. Before, all three entered every auction, the
 * engine (whose wire orders carry no owner balances) routed the pair as one aggregate that overdrew the owner, the
 * driver refused it ("owner balance or allowance too low") before any simulation, nothing won, the failing-order
 * search (started only by simulation failures) never ran, and the pair never settled again. Now the auction gives an
 * owner's fill-or-kill orders its balance, the most generous limit then the oldest first: the newer order (which
 * asks one atom more) is left out (`insufficient_balance`) and the rest — the honest order and the owner's older
 * order — settles.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { E18, trading, waitFor, type Trading } from './fixtures/trading.js';
import { toBytes } from '../src/db/codec.js';

describe('two orders that cannot settle together', () => {
  let app: TestApp;
  let t: Trading;

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    t = trading(app);
  });
  after(async () => {
    await app?.stop();
  });

  const status = async (uid: string) => ((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status: string }).status;
  const events = async (uid: string) =>
    (await app.database.db.selectFrom('order_events').select(['label', 'reason']).where('chain_id', '=', 31337).where('order_uid', '=', toBytes(uid as `0x${string}`)).orderBy('id').execute()).map((e) => (e.reason ? `${e.label}:${e.reason}` : e.label));

  it('do not halt their pair: the newer order is left out, the rest settles', async () => {
    const [owner, honest] = await Promise.all([t.freshAccount([{ token: 'WETH', amount: '1' }]), t.freshAccount([{ token: 'WETH', amount: '1' }])]);
    const part = (E18 * 6n) / 10n;
    const limit = ((await t.marketOut(part, [t.tokens.WETH, t.tokens.USDC])) * 80n) / 100n;
    // all three in one auction: auctions held back while they are placed
    assert.equal((await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: true })).status, 200);
    let older: string, newer: string, other: string;
    try {
      older = await t.place(owner, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: part, buyAmount: limit, kind: 'sell' });
      newer = await t.place(owner, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: part, buyAmount: limit + 1n, kind: 'sell' });
      other = await t.place(honest, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: E18 / 2n, buyAmount: (limit * 5n) / 6n, kind: 'sell' });
    } finally {
      await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: false });
    }
    await waitFor('the honest order and the older one filled', async () => ((await status(other)) === 'fulfilled' && (await status(older)) === 'fulfilled' ? true : null), 60_000).catch(async (err) => {
      console.error(JSON.stringify({ older: await events(older), newer: await events(newer), other: await events(other) }));
      throw err;
    });
    const why = (await events(newer)).find((e) => e === 'invalid:insufficient_balance');
    assert.ok(why, `an order event says why: ${JSON.stringify(await events(newer))}`);
    assert.deepEqual((await events(older)).filter((e) => e.startsWith('invalid')), []);
    assert.notEqual(await status(newer), 'fulfilled');
  });
});
