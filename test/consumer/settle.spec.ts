// A consumer's test file (copied four times by scripts/consumer-e2e.mjs): its own batchbook instance, an order
// quoted, signed and placed through the official SDK, one auction run, the order fulfilled.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startBatchbook, type Batchbook } from 'batchbook';
import { OrderBookApi, OrderSigningUtils, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, http, keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const CHAIN_ID = 31337;
let bb: Batchbook;

const control = async (path: string, body: object = {}) => {
  const res = await fetch(`${bb.url}/devnet/control/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.json();
};

beforeAll(async () => {
  bb = await startBatchbook({ deterministic: true, startTimeoutMs: 600_000 });
}, 900_000);
afterAll(async () => {
  await bb?.stop();
}, 120_000);

test('an order placed through the SDK settles', async () => {
  const trader = privateKeyToAccount(bb.accounts.find((a) => a.role === 'trader')!.privateKey);
  setGlobalAdapter(new ViemAdapter({ provider: createPublicClient({ transport: http(bb.rpcUrl) }) as never, signer: trader as never }) as never);
  const api = new OrderBookApi({ chainId: CHAIN_ID as never, baseUrls: { [CHAIN_ID]: bb.orderBookUrl } as never });
  const weth = bb.tokens.find((t) => t.symbol === 'WETH')!.address;
  const usdc = bb.tokens.find((t) => t.symbol === 'USDC')!.address;
  const appData = '{}';
  const { quote, id } = await api.getQuote({ sellToken: weth, buyToken: usdc, from: trader.address, receiver: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 17n), appData } as never);
  const order = {
    sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: trader.address,
    sellAmount: (BigInt(quote.sellAmount) + BigInt(quote.feeAmount)).toString(),
    buyAmount: ((BigInt(quote.buyAmount) * 99n) / 100n).toString(),
    validTo: quote.validTo, appData: keccak256(toHex(appData)), feeAmount: '0', kind: quote.kind,
    partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
  };
  const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, { settlementContractOverride: { [CHAIN_ID]: bb.contracts.settlement } } as never);
  const uid = await api.sendOrder({ ...order, appData, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address, quoteId: id } as never);
  expect((await api.getOrder(uid)).status).toBe('open');
  const run = await control('auctions/run');
  expect(run.txHash).toMatch(/^0x[0-9a-f]{64}$/);
  expect((await api.getOrder(uid)).status).toBe('fulfilled');
}, 600_000);
