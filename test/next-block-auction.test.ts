/**
 * Next-block fulfilment (issue 15, point 7): with the node's own auction loop (AUCTIONS=true), a placed order starts
 * an auction cycle at once on the current head — it does not wait for the next block — so its settlement is
 * already submitted when the next block is mined. Interval mining is paused while the order is placed: no block
 * can start the cycle, only the order.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { trading, E18, type Trading } from './fixtures/trading.js';
import { waitFor } from './fixtures/wait-for.js';

describe('a placed order starts an auction on the current head (issue 15, point 7)', () => {
  let app: TestApp;
  let t: Trading;

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    t = trading(app);
  });
  after(async () => {
    await t?.rpc('evm_setIntervalMining', [1]).catch(() => {});
    await app?.stop();
  });

  it('auctions and submits the order without a new block; the next block settles it', async () => {
    const network = app.networks[0]!;
    const loop = () => app.auctionLoops.get(network.name) ?? null;
    await waitFor('the node\'s auction loop', () => loop());
    await t.rpc('evm_setIntervalMining', [0]);
    // a head the loop surely sees (the one before the pause may have come before the loop listened for blocks)
    await t.rpc('evm_mine', []);
    const head = await network.client.getBlockNumber({ cacheTime: 0 });
    await waitFor('the loop done with the head', async () => {
      const last = loop()!.last;
      return last !== null && BigInt(last.auction.block) >= head;
    }, 60_000);
    await loop()!.idle();
    const cycles: number[] = [];
    const stop = loop()!.onCycle((report) => cycles.push(report.auction.block));

    const [trader] = t.traders;
    const amount = E18 / 10n;
    const uid = await t.place(trader!, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: amount, buyAmount: ((await t.marketOut(amount, [t.tokens.WETH, t.tokens.USDC])) * 95n) / 100n, feeAmount: 0n });
    // no block was mined, yet an auction with the order ran and its settlement is waiting in the mempool
    const report = await waitFor('a cycle that settles the order', async () => {
      const last = loop()!.last;
      return last && last.auction.orders.some((o) => o.uid === uid) && last.winner?.solution.trades.some((tr) => tr.order.uid === uid) ? last : null;
    }, 60_000);
    stop();
    assert.equal(BigInt(report.auction.block), head, 'the auction was built on the head the order arrived at');
    assert.equal(await network.client.getBlockNumber({ cacheTime: 0 }), head, 'no block was mined meanwhile');
    assert.ok(cycles.length >= 1);
    await waitFor('the settlement in the mempool', async () => {
      const pending = await t.rpc<{ transactions: unknown[] }>('eth_getBlockByNumber', ['pending', false]);
      return pending.transactions.length > 0;
    }, 60_000);

    await t.rpc('evm_mine', []);
    const trades = await waitFor('the order fulfilled', async () => {
      const order = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status: string };
      if (order.status !== 'fulfilled') return null;
      return (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ blockNumber: number }>;
    }, 60_000);
    assert.equal(BigInt(trades[0]!.blockNumber), head + 1n, 'settled in the next block');
    await t.rpc('evm_setIntervalMining', [1]);
  });

  it('orders placed one after another start at most one extra auction per block (issue 19)', async () => {
    const network = app.networks[0]!;
    const loop = app.auctionLoops.get(network.name)!;
    await t.rpc('evm_setIntervalMining', [0]);
    try {
      await t.rpc('evm_mine', []);
      const head = await network.client.getBlockNumber({ cacheTime: 0 });
      await waitFor('the loop done with the new head', async () => (loop.last !== null && BigInt(loop.last.auction.block) >= head ? true : null), 60_000);
      await loop.idle();
      const cycles: number[] = [];
      const stop = loop.onCycle((report) => cycles.push(report.auction.block));
      const [, trader] = t.traders;
      const amount = E18 / 100n;
      const limit = ((await t.marketOut(amount, [t.tokens.WETH, t.tokens.USDC])) * 90n) / 100n;
      const uids: Hex[] = [];
      for (let i = 0; i < 6; i++) {
        uids.push(await t.place(trader!, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: amount, buyAmount: limit + BigInt(i), feeAmount: 0n }));
        await loop.idle();
      }
      // the positive witness: a new block's auction holds the orders the extra auction did not
      await t.rpc('evm_mine', []);
      await waitFor('the next block auctioned', async () => (cycles.some((b) => BigInt(b) > head) ? true : null), 60_000);
      stop();
      assert.equal(cycles.filter((b) => BigInt(b) === head).length, 1, `one extra auction on the head, not one per order (${cycles.join(', ')})`);
    } finally {
      await t.rpc('evm_setIntervalMining', [1]);
    }
  });
});
