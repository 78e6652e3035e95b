/**
 * A reorg on the devnet past a settlement (evm_snapshot before the order, evm_revert after it settled, then new
 * blocks past the old head): the node corrects what it derived from the lost branch — the trade is retracted,
 * the order is open again with nothing executed and its `traded` event retracted (status no longer "traded"), the competition no longer points at the lost transaction
 * (by_tx_hash 404; the competition itself stays), and the balances served are the branch's balances again.
 * The auction loop is stopped before the revert, so that the reopened order is not simply settled again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { startTestApp, type TestApp } from '../fixtures/app.js';
import { trading, type Trading } from '../fixtures/trading.js';
import { call } from '../fixtures/orders.js';
import { waitFor } from '../fixtures/wait-for.js';
import { figure } from './figures.js';

describe('a reorg past a settlement', () => {
  let app: TestApp;
  let t: Trading;
  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    t = trading(app);
  });
  after(async () => {
    await app?.stop();
  });

  it('retracts the trade, reopens the order and serves the surviving branch\'s balances', async () => {
    const trader = t.traders[0]!;
    const balanceOf = async () => {
      const res = await call(app.baseUrl, 'GET', `/31337/accounts/${trader.address}/balances?tokens=${t.tokens.WETH}`, undefined, { 'cache-control': 'no-cache' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return JSON.stringify(res.body);
    };
    const snapshot = await t.rpc<Hex>('evm_snapshot', []);
    const before = await balanceOf();
    const out = await t.marketOut(10n ** 17n, [t.tokens.WETH, t.tokens.USDC]);
    const uid = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: 10n ** 17n, buyAmount: (out * 9n) / 10n });
    const trade = await waitFor('the order to settle and its trade to be indexed', async () => {
      const trades = await call(app.baseUrl, 'GET', `/devnet/api/v2/trades?orderUid=${uid}`);
      return trades.status === 200 && trades.body.length === 1 ? (trades.body[0] as { txHash: Hex; blockNumber: number }) : null;
    }, 180_000, 250);
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body.status, 'fulfilled');
    const settledBy = await call(app.baseUrl, 'GET', `/devnet/api/v1/solver_competition/by_tx_hash/${trade.txHash}`);
    assert.equal(settledBy.status, 200);
    const auctionId = settledBy.body.auctionId as number;
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}/status`)).body.type, 'traded');
    assert.equal(typeof auctionId, 'number');
    await waitFor('the balances to show the trade', async () => (await balanceOf()) !== before, 60_000, 250);

    await app.auctionLoops.get('devnet')?.stop();
    const oldHead = Number(BigInt(await t.rpc<Hex>('eth_blockNumber', [])));
    assert.equal(await t.rpc<boolean>('evm_revert', [snapshot]), true);
    const reverted = Date.now();
    await waitFor('the new branch to pass the old head', async () => Number(BigInt(await t.rpc<Hex>('eth_blockNumber', []))) > oldHead + 1, 120_000, 250);
    assert.equal(await t.rpc<unknown>('eth_getTransactionReceipt', [trade.txHash]), null, 'the settlement is gone from the chain');

    await waitFor('the trade to be retracted', async () => {
      const trades = await call(app.baseUrl, 'GET', `/devnet/api/v2/trades?orderUid=${uid}`);
      return trades.status === 200 && trades.body.length === 0;
    }, 120_000, 250);
    figure('reorg.seconds_until_trade_retracted', ((Date.now() - reverted) / 1000).toFixed(1));
    const order = await waitFor('the order to be open again', async () => {
      const res = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`);
      return res.body.status === 'open' ? res.body : null;
    }, 120_000, 250);
    assert.equal(order.executedSellAmount, '0');
    assert.equal(order.executedBuyAmount, '0');
    const status = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}/status`);
    assert.notEqual(status.body.type, 'traded', 'the traded event is retracted');
    await waitFor('the balances of the surviving branch', async () => (await balanceOf()) === before, 120_000, 250);
    const lost = await call(app.baseUrl, 'GET', `/devnet/api/v1/solver_competition/by_tx_hash/${trade.txHash}`);
    assert.equal(lost.status, 404, 'the competition no longer points at a transaction of the lost branch');
    assert.equal(lost.body.errorType, 'NotFound');
    assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/solver_competition/${auctionId}`)).status, 200, 'the competition itself took place');
  });
});
