/**
 * Order submission → `fulfilled` (issue 15, point 7), on a whole node with auctions on and 2 s devnet blocks: lone
 * market orders (a trader sells WETH for USDC at 95 % of the AMM's price, settled against the AMM) and CoW pairs
 * (two traders' opposite orders placed back to back, settled together), one after the other, each placed at a
 * different point of the block interval. Per order: the blocks from the head at submission to the block of its
 * trade, and the time until GET /orders/{uid} says `fulfilled`. The figure is the median number of blocks ÷ one
 * block (≤ 1: fulfilled in the next block). Lower is better.
 */
import { performance } from 'node:perf_hooks';
import type { Address, Hex, LocalAccount } from 'viem';
import { startTestApp } from '../test/fixtures/app.js';
import { call } from '../test/fixtures/orders.js';
import { trading, E18 } from '../test/fixtures/trading.js';
import { waitFor } from '../test/fixtures/wait-for.js';
import type { Figure } from './figure.js';

const LONE = 8;
const COW_PAIRS = 4;
const BLOCK_MS = 2_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchFulfilment(): Promise<Figure> {
  const app = await startTestApp({ AUCTIONS: 'true', DEVNET_BLOCK_TIME: String(BLOCK_MS / 1000) });
  try {
    const t = trading(app);
    const network = app.networks[0]!;
    const [a, b] = t.traders as [LocalAccount, LocalAccount];
    const { WETH, USDC } = t.tokens;
    const blocks: number[] = [];
    const ms: number[] = [];
    const cowBlocks: number[] = [];
    const tradeBlock = async (uid: Hex) => {
      const order = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status: string };
      if (order.status !== 'fulfilled') return null;
      const trades = (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ blockNumber: number }>;
      return trades[0]?.blockNumber ?? null;
    };
    const sell = async (account: LocalAccount, sellToken: Address, buyToken: Address, amount: bigint, priceShare: bigint) =>
      t.place(account, { sellToken, buyToken, sellAmount: amount, buyAmount: ((await t.marketOut(amount, [sellToken, buyToken])) * priceShare) / 100n, feeAmount: 0n });

    for (let i = 0; i < LONE + COW_PAIRS; i++) {
      // a different point of the block interval each time
      const head = await network.client.getBlockNumber({ cacheTime: 0 });
      await waitFor('the next block', async () => (await network.client.getBlockNumber({ cacheTime: 0 })) > head, 30_000, 20);
      await new Promise((r) => setTimeout(r, ((i * 7) % 8) * (BLOCK_MS / 8)));
      const cow = i >= LONE;
      const started = performance.now();
      const at = Number(await network.client.getBlockNumber({ cacheTime: 0 }));
      const uids: Hex[] = cow
        ? await Promise.all([sell(a, WETH, USDC, E18 / 10n, 95n), sell(b, USDC, WETH, 300n * 10n ** 6n, 95n)])
        : [await sell(a, WETH, USDC, E18 / 10n + BigInt(i), 95n)];
      for (const uid of uids) {
        const mined = await waitFor(`order ${uid} fulfilled`, () => tradeBlock(uid), 60_000, 25);
        (cow ? cowBlocks : blocks).push(mined - at);
        if (!cow) ms.push(performance.now() - started);
      }
    }
    const all = [...blocks, ...cowBlocks];
    return {
      name: 'fulfilment',
      value: median(all),
      unit: `blocks median from submission to the trade's block (${LONE} lone orders, ${COW_PAIRS} CoW pairs)`,
      baseline: 1,
      baselineUnit: 'block (fulfilled in the next block)',
      ratio: median(all),
      note: `${BLOCK_MS / 1000} s blocks; lone ${blocks.join(',')}, CoW ${cowBlocks.join(',')} blocks; lone orders fulfilled (API) after ${Math.round(median(ms))} ms median`,
    };
  } finally {
    await app.stop();
  }
}
