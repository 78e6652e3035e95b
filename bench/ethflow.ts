/**
 * ETH-flow (issue 21), on a whole node with auctions on and 2 s devnet blocks: a trader sells ETH through the
 * devnet's eth-flow contract (createOrder at 95 % of the AMM's price), then the same trader places a signed WETH
 * order of the same size, one after the other. Figures: (1) placement → visible, the blocks from the block holding
 * `createOrder` to the head at which GET /orders/{uid} first answers (median; the issue asks ≤ 3); (2) submission →
 * fulfilled for eth-flow orders (from the head when `createOrder` was sent to the trade's block) against the same for
 * signed orders (from the head at POST). Lower is better.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { createWalletClient, http } from 'viem';
import { ETHFLOW_ABI, ethFlowOrderUid, orderDomain, type EthFlowOrderData } from '../src/protocol/index.js';
import { startTestApp } from '../test/fixtures/app.js';
import { call } from '../test/fixtures/orders.js';
import { trading, E18 } from '../test/fixtures/trading.js';
import { waitFor } from '../test/fixtures/wait-for.js';
import type { Figure } from './figure.js';

const ROUNDS = 6;
const BLOCK_MS = 2_000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchEthFlow(): Promise<Figure[]> {
  const app = await startTestApp({ AUCTIONS: 'true', DEVNET_BLOCK_TIME: String(BLOCK_MS / 1000) });
  try {
    const t = trading(app);
    const network = app.networks[0]!;
    const client = network.client;
    const ethFlow = app.devnet!.describe().contracts.ethFlow as Address;
    const [trader] = t.traders as [LocalAccount];
    const wallet = createWalletClient({ account: trader, chain: client.chain, transport: http(app.devnet!.rpcUrl) });
    const head = async () => Number(await client.getBlockNumber({ cacheTime: 0 }));
    const tradeBlock = async (uid: Hex) => {
      const order = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body as { status?: string };
      if (order.status !== 'fulfilled') return null;
      const trades = (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ blockNumber: number }>;
      return trades[0]?.blockNumber ?? null;
    };
    const visible: number[] = [];
    const ethFlowBlocks: number[] = [];
    const signedBlocks: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const amount = E18 / 10n + BigInt(i);
      const buyAmount = ((await t.marketOut(amount, [t.tokens.WETH, t.tokens.USDC])) * 95n) / 100n;
      const order: EthFlowOrderData = {
        buyToken: t.tokens.USDC, receiver: trader.address, sellAmount: amount, buyAmount, appData: `0x${'00'.repeat(32)}`,
        feeAmount: 0n, validTo: Math.floor(Date.now() / 1000) + 1800, partiallyFillable: false, quoteId: 0n,
      };
      const uid = ethFlowOrderUid(order, { ethFlow, wrappedNative: t.tokens.WETH, domain: orderDomain(31337) });
      const sentAt = await head();
      const hash = await wallet.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value: amount, chain: client.chain, account: trader });
      const placed = Number((await client.waitForTransactionReceipt({ hash, pollingInterval: 100 })).blockNumber);
      const seenAt = await waitFor('the eth-flow order visible', async () => ((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).status === 200 ? head() : null), 60_000, 25);
      visible.push(seenAt - placed);
      ethFlowBlocks.push((await waitFor('the eth-flow order fulfilled', () => tradeBlock(uid), 90_000, 50)) - sentAt);

      const postedAt = await head();
      const signed = await t.place(trader, { sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, sellAmount: amount, buyAmount, feeAmount: 0n });
      signedBlocks.push((await waitFor('the signed order fulfilled', () => tradeBlock(signed), 90_000, 50)) - postedAt);
    }
    return [
      {
        name: 'ethflow-visible',
        value: median(visible),
        unit: `blocks median from the createOrder block to the order in the API (${ROUNDS} orders)`,
        baseline: 3,
        baselineUnit: 'blocks (the issue\'s bound)',
        ratio: median(visible) / 3,
        note: `${BLOCK_MS / 1000} s blocks; ${visible.join(',')}`,
      },
      {
        name: 'ethflow-fulfilment',
        value: median(ethFlowBlocks),
        unit: 'blocks median from createOrder sent to the trade\'s block',
        baseline: median(signedBlocks),
        baselineUnit: 'blocks median for a signed order (POST to the trade\'s block)',
        ratio: median(ethFlowBlocks) / Math.max(1, median(signedBlocks)),
        note: `eth-flow ${ethFlowBlocks.join(',')}; signed ${signedBlocks.join(',')}`,
      },
    ];
  } finally {
    await app.stop();
  }
}
