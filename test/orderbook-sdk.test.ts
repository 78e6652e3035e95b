/**
 * The official client (@cowprotocol/cow-sdk OrderBookApi + OrderSigningUtils with the viem adapter) drives the
 * order book running on the real devnet: app data, quote, sign, submit, read, list, trades, native price,
 * cancel (single and batch).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OrderBookApi, OrderSigningUtils, OrderBookApiError, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, http, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';

const CHAIN_ID = 31337;
const SETTLEMENT = '0x9008D19f58AAbD9eD0D60971565AA8510560ab41';
const override = { settlementContractOverride: { [CHAIN_ID]: SETTLEMENT } } as never;

/** The SDK's OrderBookApi pointed at the node's devnet order book, signing with `account` (no client-side retries). */
function connectSdk(app: TestApp, account: ReturnType<typeof privateKeyToAccount>): OrderBookApi {
  const provider = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
  setGlobalAdapter(new ViemAdapter({ provider: provider as never, signer: account as never }) as never);
  return new OrderBookApi({
    chainId: CHAIN_ID as never,
    env: 'prod',
    baseUrls: { [CHAIN_ID]: `${app.baseUrl}/devnet` } as never,
    backoffOpts: { numOfAttempts: 1 },
    limiterOpts: { tokensPerInterval: 1000, interval: 'second' },
  } as never);
}

describe('order book driven by the official SDK', () => {
  let app: TestApp;
  let api: OrderBookApi;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let weth: Hex;
  let usdc: Hex;

  before(async () => {
    app = await startTestApp();
    const d = app.devnet!.describe();
    trader = privateKeyToAccount(d.accounts.find((a) => a.role === 'trader')!.privateKey);
    weth = d.tokens.find((t) => t.symbol === 'WETH')!.address;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    api = connectSdk(app, trader);
  });
  after(async () => {
    await app?.stop();
  });

  async function placeOrder(opts: { sellAmount?: bigint; appData?: string; validFor?: number } = {}) {
    const appDataDoc = opts.appData ?? '{"appCode":"batchbook-test","metadata":{},"version":"1.4.0"}';
    const appDataHash = keccak256(toHex(appDataDoc));
    await api.uploadAppData(appDataHash, appDataDoc);
    const { quote, id } = await api.getQuote({
      sellToken: weth, buyToken: usdc, from: trader.address, receiver: trader.address, kind: 'sell' as never,
      sellAmountBeforeFee: String(opts.sellAmount ?? 10n ** 17n), appData: appDataDoc, validFor: opts.validFor,
    } as never);
    const order = {
      sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: trader.address,
      sellAmount: (BigInt(quote.sellAmount) + BigInt(quote.feeAmount)).toString(),
      buyAmount: ((BigInt(quote.buyAmount) * 995n) / 1000n).toString(),
      validTo: quote.validTo, appData: appDataHash, feeAmount: '0', kind: quote.kind,
      partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
    };
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
    const uid = await api.sendOrder({ ...order, appData: appDataDoc, appDataHash, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address, quoteId: id } as never);
    const expected = await OrderSigningUtils.generateOrderId(CHAIN_ID as never, order as never, { owner: trader.address } as never, override);
    return { uid, expectedUid: expected.orderId, order, quoteId: id, quote };
  }

  it('uploads app data, quotes, signs and submits: 201 with the UID the SDK computes', async () => {
    const { uid, expectedUid, quoteId, quote } = await placeOrder();
    assert.equal(uid, expectedUid);
    assert.ok(typeof quoteId === 'number' && quoteId > 0);
    assert.ok(BigInt(quote.feeAmount) > 0n, 'the quote prices the network fee');
    const stored = await api.getOrder(uid);
    assert.equal(stored.uid, uid);
    assert.equal(stored.status, 'open');
    assert.equal(stored.owner, trader.address.toLowerCase());
    assert.equal(stored.class, 'limit');
    assert.equal(stored.signingScheme, 'eip712');
    assert.equal(stored.fullAppData, '{"appCode":"batchbook-test","metadata":{},"version":"1.4.0"}');
    assert.equal(stored.executedSellAmount, '0');
    assert.equal((stored as unknown as { quote: { solver: string } }).quote.solver, 'amm-uniswap-v2');
  });

  it('reads app data back, lists the account orders newest first, and has no trades yet', async () => {
    const a = await placeOrder({ sellAmount: 2n * 10n ** 17n });
    const b = await placeOrder({ sellAmount: 3n * 10n ** 17n });
    const appData = await api.getAppData(keccak256(toHex('{"appCode":"batchbook-test","metadata":{},"version":"1.4.0"}')));
    assert.equal((appData as { fullAppData: string }).fullAppData, '{"appCode":"batchbook-test","metadata":{},"version":"1.4.0"}');
    const orders = await api.getOrders({ owner: trader.address });
    const uids = orders.map((o) => o.uid);
    assert.ok(uids.indexOf(b.uid) < uids.indexOf(a.uid), 'newest first');
    const trades = await api.getTrades({ orderUid: a.uid });
    assert.deepEqual(trades, []);
    const status = await api.getOrderCompetitionStatus(a.uid);
    // upstream: scheduled right after creation (`created`), active once in an auction; auctions are off here
    assert.equal(status.type, 'scheduled');
  });

  it('answers native prices and the version', async () => {
    const price = await api.getNativePrice(usdc);
    // USDC (6 decimals) at roughly 3000 USD per ETH: ~3.3e8 wei per atom
    assert.ok(price.price !== undefined && price.price > 1e8 && price.price < 1e9, String(price.price));
    const version = await api.getVersion();
    assert.match(String(version), /^\d+\.\d+\.\d+/);
  });

  it('cancels one order (the SDK signs OrderCancellations with one UID) and then a batch', async () => {
    const one = await placeOrder({ sellAmount: 4n * 10n ** 17n });
    const sig = await OrderSigningUtils.signOrderCancellations([one.uid], CHAIN_ID as never, trader as never, override);
    await api.sendSignedOrderCancellations({ ...sig, orderUids: [one.uid] } as never);
    const cancelled = await api.getOrder(one.uid);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.invalidated, true);

    const x = await placeOrder({ sellAmount: 5n * 10n ** 17n });
    const y = await placeOrder({ sellAmount: 6n * 10n ** 17n });
    const batch = await OrderSigningUtils.signOrderCancellations([x.uid, y.uid], CHAIN_ID as never, trader as never, override);
    await api.sendSignedOrderCancellations({ ...batch, orderUids: [x.uid, y.uid] } as never);
    for (const uid of [x.uid, y.uid]) assert.equal((await api.getOrder(uid)).status, 'cancelled');

    // cancelling again is refused with AlreadyCancelled, and nothing else changes
    await assert.rejects(
      api.sendSignedOrderCancellations({ ...batch, orderUids: [x.uid, y.uid] } as never),
      (err: unknown) => err instanceof OrderBookApiError && err.response.status === 400 && (err.body as { errorType: string }).errorType === 'AlreadyCancelled',
    );
  });

  it('refuses a duplicate order with DuplicateOrder', async () => {
    const { order, uid } = await placeOrder({ sellAmount: 7n * 10n ** 17n });
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
    await assert.rejects(
      api.sendOrder({ ...order, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address } as never),
      (err: unknown) => err instanceof OrderBookApiError && (err.body as { errorType: string }).errorType === 'DuplicateOrder',
    );
    assert.equal((await api.getOrder(uid)).status, 'open');
  });
});

describe('orders placed through the SDK settle on the devnet (the node’s own auction loop)', () => {
  let app: TestApp;
  let api: OrderBookApi;
  let trader: ReturnType<typeof privateKeyToAccount>;

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    trader = privateKeyToAccount(app.devnet!.describe().accounts[1]!.privateKey);
    api = connectSdk(app, trader);
  });
  after(async () => {
    await app?.stop();
  });

  it('quote → sign → submit → settled within a few blocks: fulfilled, trades with the tx hash, competition, surplus', async () => {
    const d = app.devnet!.describe();
    const dai = d.tokens.find((t) => t.symbol === 'DAI')!.address;
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    const { quote, id } = await api.getQuote({ sellToken: dai, buyToken: usdc, from: trader.address, receiver: trader.address, kind: 'sell' as never, sellAmountBeforeFee: String(500n * 10n ** 18n) } as never);
    const order = orderWithinSlippage(quote, trader.address);
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
    const uid = await api.sendOrder({ ...order, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address, quoteId: id } as never);

    let status = 'open';
    for (let i = 0; i < 120 && status !== 'fulfilled'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await api.getOrder(uid)).status;
    }
    assert.equal(status, 'fulfilled');
    const stored = await api.getOrder(uid);
    assert.equal(stored.executedSellAmount, order.sellAmount);
    assert.ok(BigInt(stored.executedBuyAmount) >= BigInt(order.buyAmount));

    const trades = await api.getTrades({ orderUid: uid });
    assert.equal(trades.length, 1);
    assert.match(String(trades[0]!.txHash), /^0x[0-9a-f]{64}$/);
    const txOrders = await api.getTxOrders(String(trades[0]!.txHash));
    assert.ok(txOrders.some((o) => o.uid === uid));
    const competition = (await api.getSolverCompetition(String(trades[0]!.txHash))) as unknown as { auctionId: number; solutions: Array<{ isWinner: boolean; ranking: number }> };
    assert.ok(competition.solutions.some((s) => s.isWinner && s.ranking === 1));
    const v1 = await fetch(`${app.baseUrl}/devnet/api/v1/solver_competition/${competition.auctionId}`);
    assert.equal(v1.status, 200);
    assert.equal(((await v1.json()) as { auctionId: number }).auctionId, competition.auctionId);
    assert.equal((await api.getOrderCompetitionStatus(uid)).type, 'traded');
    const surplus = await api.getTotalSurplus(trader.address);
    assert.ok(BigInt(surplus.totalSurplus ?? '0') > 0n, 'bought more than the 2 % slippage limit');

    // the node's own auction: an order that cannot trade (10× the market) is listed with its amounts and both
    // tokens' prices; the traded one is not
    const { quote: q2 } = await api.getQuote({ sellToken: dai, buyToken: usdc, from: trader.address, receiver: trader.address, kind: 'sell' as never, sellAmountBeforeFee: String(10n ** 18n) } as never);
    const waiting = { ...orderWithinSlippage(q2, trader.address), buyAmount: (BigInt(q2.buyAmount) * 10n).toString() };
    const signedWaiting = await OrderSigningUtils.signOrder(waiting as never, CHAIN_ID as never, trader as never, override);
    const waitingUid = await api.sendOrder({ ...waiting, signature: signedWaiting.signature, signingScheme: signedWaiting.signingScheme, from: trader.address } as never);
    type AuctionBody = { id: number; block: number; orders: Array<{ uid: string; sellToken: string; buyToken: string; sellAmount: string; buyAmount: string; owner: string; kind: string }>; prices: Record<string, string> };
    let auction: AuctionBody | undefined;
    for (let i = 0; i < 240 && !auction?.orders.some((o) => o.uid === waitingUid); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 250));
      const res = await fetch(`${app.baseUrl}/devnet/api/v1/auction`);
      assert.equal(res.status, 200);
      auction = (await res.json()) as AuctionBody;
    }
    const listed = auction!.orders.find((o) => o.uid === waitingUid);
    assert.ok(listed, `order ${waitingUid} never appeared in the node's auction`);
    assert.ok(Number.isInteger(auction!.id) && auction!.id > competition.auctionId, `auction ${auction!.id} comes after the settled one (${competition.auctionId})`);
    assert.ok(auction!.block > 0);
    assert.deepEqual(
      [listed.sellToken.toLowerCase(), listed.buyToken.toLowerCase(), listed.sellAmount, listed.buyAmount, listed.owner.toLowerCase(), listed.kind],
      [dai.toLowerCase(), usdc.toLowerCase(), waiting.sellAmount, waiting.buyAmount, trader.address.toLowerCase(), 'sell'],
    );
    assert.ok(!auction!.orders.some((o) => o.uid === uid), 'the traded order is no longer auctioned');
    const prices = new Map(Object.entries(auction!.prices).map(([token, price]) => [token.toLowerCase(), price]));
    for (const token of [dai, usdc]) assert.match(prices.get(token.toLowerCase()) ?? '', /^[1-9][0-9]*$/, `a native price for ${token}`);
  });

  it('an order selling USDC for native ETH (0xEeee…) settles and pays the owner in ETH; v1 trades page as v2', async () => {
    const d = app.devnet!.describe();
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    const ETH = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE';
    const client = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
    const { quote, id } = await api.getQuote({ sellToken: usdc, buyToken: ETH, from: trader.address, receiver: trader.address, kind: 'sell' as never, sellAmountBeforeFee: String(1000n * 10n ** 6n) } as never);
    const order = orderWithinSlippage(quote, trader.address);
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
    const before = await client.getBalance({ address: trader.address });
    const uid = await api.sendOrder({ ...order, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address, quoteId: id } as never);
    let status = 'open';
    for (let i = 0; i < 120 && status !== 'fulfilled'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await api.getOrder(uid)).status;
    }
    assert.equal(status, 'fulfilled', 'the ETH order settled within 30 s');
    const stored = await api.getOrder(uid);
    const after = await client.getBalance({ address: trader.address });
    assert.ok(BigInt(stored.executedBuyAmount) >= BigInt(order.buyAmount));
    assert.equal(after - before, BigInt(stored.executedBuyAmount), 'the owner received exactly the executed amount in ETH');

    // v1 with offset/limit pages exactly as v2
    for (const page of ['offset=0&limit=1', 'offset=1&limit=1', 'offset=0&limit=10']) {
      const v1 = await (await fetch(`${app.baseUrl}/devnet/api/v1/trades?owner=${trader.address}&${page}`)).json();
      const v2 = await (await fetch(`${app.baseUrl}/devnet/api/v2/trades?owner=${trader.address}&${page}`)).json();
      assert.deepEqual(v1, v2, page);
    }
    const all = await (await fetch(`${app.baseUrl}/devnet/api/v1/trades?owner=${trader.address}`)).json();
    assert.deepEqual(all, await (await fetch(`${app.baseUrl}/devnet/api/v2/trades?owner=${trader.address}&limit=1000`)).json(), 'unpaginated v1 lists every trade');
  });
});

/** The order a wallet signs for a quote: the quote's amounts with 2 % slippage on the buy side and a zero fee. */
function orderWithinSlippage(
  quote: { sellToken: string; buyToken: string; sellAmount: string; buyAmount: string; feeAmount: string; validTo: number; appData: string; kind: string },
  owner: string,
) {
  return {
    sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: owner,
    sellAmount: (BigInt(quote.sellAmount) + BigInt(quote.feeAmount)).toString(),
    buyAmount: ((BigInt(quote.buyAmount) * 98n) / 100n).toString(),
    validTo: quote.validTo, appData: quote.appData, feeAmount: '0', kind: quote.kind,
    partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
  };
}
