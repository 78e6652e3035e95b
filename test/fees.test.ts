/**
 * Fees end to end (issue 23) on the real devnet, orders placed with the official SDK (@cowprotocol/cow-sdk):
 * a market sell with two partner fees over the cap, a market buy with a partner fee (WETH bought with USDC),
 * an out-of-market limit order paying a capped surplus fee and a network fee, a dust order that stays open,
 * a restart with other policies and an upcoming schedule taking over. Reported amounts are checked against what
 * the settlement contract really kept in the transaction (its balance change in the settling block).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { OrderBookApi, OrderSigningUtils, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, createWalletClient, encodeFunctionData, http, keccak256, maxUint256, parseAbi, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { waitFor as waitForValue } from './fixtures/wait-for.js';
import { wireAuctionLoop } from '../src/loops.js';
import { watchIndexedRanges } from '../src/auction/indexed-ranges.js';
import type { RunningAuctionLoop } from '../src/auction/auction-loop.js';
import type { AuctionFeeSchedule } from '../src/auction/build-auction.js';
import type { ChainNetwork } from '../src/chain/network.js';
import { DEFAULT_FEE_POLICIES, parseFeeSchedule } from '../src/protocol/index.js';
import { UNISWAP_V2_ROUTER_ABI } from '../src/orderbook/pricing/uniswap-v2-estimator.js';

const CHAIN_ID = 31337;
const SETTLEMENT = '0x9008D19f58AAbD9eD0D60971565AA8510560ab41';
const override = { settlementContractOverride: { [CHAIN_ID]: SETTLEMENT } } as never;
const ERC20 = parseAbi(['function approve(address, uint256) returns (bool)']);
const SWAP = parseAbi(['function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)']);
const E18 = 10n ** 18n;
const R1 = '0x00000000000000000000000000000000000000e1';
const R2 = '0x00000000000000000000000000000000000000e2';
const R3 = '0x00000000000000000000000000000000000000e3';

type Fee = { policy: Record<string, { factor: number; maxVolumeFactor?: number }>; amount: string; token: string };

describe('fees end to end with the official SDK', () => {
  let app: TestApp;
  let network: ChainNetwork;
  let api: OrderBookApi;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let mover: ReturnType<typeof privateKeyToAccount>;
  let WETH: Address;
  let USDC: Address;
  let loop: RunningAuctionLoop | null = null;
  let abort = new AbortController();
  const waitFor = <T,>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000) => waitForValue(what, probe, timeoutMs, 250);

  function startLoop(fees: AuctionFeeSchedule | null | undefined, requireGasCoverage?: boolean): void {
    abort = new AbortController();
    loop = wireAuctionLoop({
      network,
      db: app.database.db,
      nativePrices: app.orderBooks.get('devnet')!.nativePrices,
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      signal: abort.signal,
      indexer: watchIndexedRanges({ db: app.database.db, chainId: CHAIN_ID, signal: abort.signal, pollMs: 200 }),
      fees,
      requireGasCoverage,
    });
  }
  async function stopLoop(): Promise<void> {
    abort.abort();
    await loop?.stop();
    loop = null;
  }

  before(async () => {
    app = await startTestApp();
    network = app.networks[0]!;
    const d = app.devnet!.describe();
    const traders = d.accounts.filter((a) => a.role === 'trader');
    trader = privateKeyToAccount(traders[0]!.privateKey);
    mover = privateKeyToAccount(traders[1]!.privateKey);
    WETH = d.tokens.find((t) => t.symbol === 'WETH')!.address.toLowerCase() as Address;
    USDC = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
    const provider = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
    setGlobalAdapter(new ViemAdapter({ provider: provider as never, signer: trader as never }) as never);
    api = new OrderBookApi({
      chainId: CHAIN_ID as never,
      env: 'prod',
      baseUrls: { [CHAIN_ID]: `${app.baseUrl}/devnet` } as never,
      backoffOpts: { numOfAttempts: 1 },
      limiterOpts: { tokensPerInterval: 1000, interval: 'second' },
    } as never);
    startLoop(undefined); // production's documented schedule, as `npm start` with nothing set
  });

  after(async () => {
    await stopLoop();
    await app?.stop();
  });

  /** Quote, sign and submit with the SDK; limits 3 % off the quote (a market order with room for its partner fees). */
  async function placeMarket(p: { kind: 'sell' | 'buy'; sellToken: Address; buyToken: Address; amount: bigint; partnerFee?: unknown }) {
    const appData = JSON.stringify({ appCode: 'batchbook-fees', metadata: p.partnerFee ? { partnerFee: p.partnerFee } : {}, version: '1.4.0' });
    const appDataHash = keccak256(toHex(appData));
    await api.uploadAppData(appDataHash, appData);
    const request = p.kind === 'sell' ? { sellAmountBeforeFee: String(p.amount) } : { buyAmountAfterFee: String(p.amount) };
    const { quote, id } = await api.getQuote({ sellToken: p.sellToken, buyToken: p.buyToken, from: trader.address, receiver: trader.address, kind: p.kind as never, appData, ...request } as never);
    const sellAmount = BigInt(quote.sellAmount) + BigInt(quote.feeAmount);
    const order = {
      sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: trader.address,
      sellAmount: (p.kind === 'sell' ? sellAmount : (sellAmount * 103n) / 100n).toString(),
      buyAmount: (p.kind === 'sell' ? (BigInt(quote.buyAmount) * 97n) / 100n : BigInt(quote.buyAmount)).toString(),
      validTo: quote.validTo, appData: appDataHash, feeAmount: '0', kind: quote.kind,
      partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
    };
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
    const uid = (await api.sendOrder({ ...order, appData, appDataHash, signature: signed.signature, signingScheme: signed.signingScheme, from: trader.address, quoteId: id } as never)) as Hex;
    return { uid, quote: quote as unknown as Record<string, string> };
  }

  const fulfilled = (uid: Hex) => waitFor(`order ${uid.slice(0, 10)} fulfilled`, async () => ((await api.getOrder(uid)).status === 'fulfilled' ? true : null));
  const tradeOf = async (uid: Hex) => {
    const [trade] = (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ txHash: Hex; blockNumber: number; sellAmount: string; buyAmount: string; sellAmountBeforeFees: string; executedProtocolFees: Fee[] }>;
    return trade!;
  };
  /** What the settlement contract gained of `token` in the block (one settlement per block here). */
  const kept = async (token: Address, block: number) => {
    const [before] = await network.reader.erc20Balances(network.settlement, [token], { blockNumber: BigInt(block - 1) });
    const [after] = await network.reader.erc20Balances(network.settlement, [token], { blockNumber: BigInt(block) });
    return after! - before!;
  };
  const sum = (fees: Fee[]) => fees.reduce((s, f) => s + BigInt(f.amount), 0n);
  const auctionOrder = async (uid: Hex) => {
    const a = (await call(app.baseUrl, 'GET', '/devnet/api/v1/auction')).body as { id: number; orders: Array<{ uid: Hex; protocolFees: unknown[] }> };
    return { id: a.id, order: a.orders?.find((o) => o.uid === uid) ?? null };
  };

  it('a market sell with two partner fees over the cap: the second partner is cut, the fees are what the settlement kept', async () => {
    const { uid, quote } = await placeMarket({ kind: 'sell', sellToken: WETH, buyToken: USDC, amount: E18, partnerFee: [{ volumeBps: 80, recipient: R1 }, { volumeBps: 50, recipient: R2 }] });
    assert.equal(quote.protocolFeeBps, '2', 'the quote folds in the 2 bps volume fee');
    await fulfilled(uid);
    const trade = await tradeOf(uid);
    const fees = trade.executedProtocolFees;
    assert.deepEqual(fees.map((f) => Object.keys(f.policy)[0]), ['priceImprovement', 'volume', 'volume', 'volume'], 'in the market: price improvement, the volume fee, then the two partners');
    assert.deepEqual(fees.slice(1, 3).map((f) => f.policy.volume!.factor), [0.0002, 0.008]);
    assert.ok(Math.abs(fees[3]!.policy.volume!.factor - 0.001984126984126984) < 1e-15, `the second partner capped to ${fees[3]!.policy.volume!.factor}`);
    for (const f of fees) assert.equal(f.token, USDC, 'a sell order pays its fees in the buy token');
    // each partner fee is its share of the volume left after the earlier fees
    const [, , f1, f2] = fees.map((f) => BigInt(f.amount));
    assert.ok(f1! > 0n && f2! > 0n);
    // f1 = 0.008 × V, f2 = 0.00198… × (V − f1)
    assert.ok(Math.abs(Number(f2!) / Number(f1!) - (0.001984126984126984 / 0.008) * (1 - 0.008)) < 1e-5, `${f2} / ${f1}`);

    // the settlement kept the protocol and partner fees and the network fee, all in USDC (the AMM swapped the whole sale)
    const order = await api.getOrder(uid);
    const executedFee = BigInt(order.executedFee!);
    assert.equal(order.executedFeeAmount, '0');
    assert.equal((order as unknown as { executedFeeToken: string }).executedFeeToken, WETH);
    assert.equal(order.executedSellAmountBeforeFees, order.executedSellAmount);
    const keptUsdc = await kept(USDC, trade.blockNumber);
    assert.ok(keptUsdc > sum(fees), `kept ${keptUsdc} > the protocol and partner fees ${sum(fees)} (plus the network fee)`);
    // executedFee (WETH) is the same share of the sale as what the settlement kept is of what the pool paid
    const bought = BigInt(trade.buyAmount);
    const lhs = keptUsdc * E18;
    const rhs = executedFee * (bought + keptUsdc);
    assert.ok((lhs > rhs ? lhs - rhs : rhs - lhs) * 10n ** 6n < lhs, `executedFee ${executedFee} WETH matches the ${keptUsdc} USDC kept`);
    assert.equal(trade.sellAmountBeforeFees, trade.sellAmount);

    // the partners' accounts
    const r1 = await call(app.baseUrl, 'GET', `/${CHAIN_ID}/accounts/${R1.toUpperCase().replace('0X', '0x')}/partnerFees`);
    assert.equal(r1.status, 200);
    assert.deepEqual(r1.body, { recipient: R1, totals: [{ token: USDC, amount: f1!.toString() }], fees: [{ orderUid: uid, txHash: trade.txHash, blockNumber: trade.blockNumber, token: USDC, amount: f1!.toString() }] });
    const r2 = await call(app.baseUrl, 'GET', `/${CHAIN_ID}/accounts/${R2}/partnerFees`);
    assert.deepEqual(r2.body.totals, [{ token: USDC, amount: f2!.toString() }]);
    const none = await call(app.baseUrl, 'GET', `/${CHAIN_ID}/accounts/0x${'99'.repeat(20)}/partnerFees`);
    assert.deepEqual(none.body, { recipient: `0x${'99'.repeat(20)}`, totals: [], fees: [] });
    const bad = await call(app.baseUrl, 'GET', `/${CHAIN_ID}/accounts/0x123/partnerFees`);
    assert.equal(bad.status, 400);
    assert.equal(typeof bad.body.message, 'string');
  });

  it('a market buy (WETH with USDC) with a partner fee: the settlement keeps exactly the executed fee, in USDC', async () => {
    const { uid, quote } = await placeMarket({ kind: 'buy', sellToken: USDC, buyToken: WETH, amount: E18 / 10n, partnerFee: { volumeBps: 25, recipient: R3 } });
    assert.equal(quote.protocolFeeBps, '2');
    await fulfilled(uid);
    const trade = await tradeOf(uid);
    assert.equal(trade.buyAmount, (E18 / 10n).toString());
    const fees = trade.executedProtocolFees;
    assert.deepEqual(fees.map((f) => Object.keys(f.policy)[0]), ['priceImprovement', 'volume', 'volume']);
    assert.equal(fees[2]!.policy.volume!.factor, 0.0025);
    for (const f of fees) assert.equal(f.token, USDC, 'a buy order pays its fees in the sell token');
    const order = await api.getOrder(uid);
    const keptUsdc = await kept(USDC, trade.blockNumber);
    assert.equal(BigInt(order.executedFee!), keptUsdc, 'executedFee is exactly what the settlement kept');
    assert.ok(keptUsdc > sum(fees), 'and more than the protocol and partner fees: the network fee too');
    const r3 = await call(app.baseUrl, 'GET', `/${CHAIN_ID}/accounts/${R3}/partnerFees`);
    assert.deepEqual(r3.body.totals, [{ token: USDC, amount: fees[2]!.amount }]);
  });

  it('an out-of-market limit order pays a surplus fee capped at 0.98 % of its volume, and a network fee', async () => {
    const out = (await network.client.readContract({ address: network.amm!.router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsOut', args: [E18 / 2n, [WETH, USDC]] })).at(-1)!;
    // asks 2 % more than the market gives: outside the market, in the auctions, not filled yet
    const order = makeOrder({ sellToken: WETH, buyToken: USDC, sellAmount: E18 / 2n, buyAmount: (out * 102n) / 100n, validTo: Math.floor(Date.now() / 1000) + 1800 });
    const signature = await signOrder(trader as never, order);
    const placed = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'eip712', trader.address));
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    const uid = placed.body as Hex;
    const listed = await waitFor('the limit order in an auction', async () => (await auctionOrder(uid)).order);
    assert.deepEqual(listed.protocolFees, [{ surplus: { factor: 0.5, maxVolumeFactor: 0.0098 } }, { volume: { factor: 0.0002 } }]);
    // the market moves its way: someone buys a lot of WETH with USDC on the pool
    const wallet = createWalletClient({ account: mover, chain: network.client.chain, transport: http(app.devnet!.rpcUrl) });
    const minted = await app.devnet!.faucet({ address: mover.address, token: 'USDC', amount: '300000' });
    await minted.waitForReceipt();
    for (const data of [
      encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [network.amm!.router, maxUint256] }),
      encodeFunctionData({ abi: SWAP, functionName: 'swapExactTokensForTokens', args: [300_000n * 10n ** 6n, 0n, [USDC, WETH], mover.address, 2n ** 32n] }),
    ]) {
      const hash = await wallet.sendTransaction({ account: mover, chain: network.client.chain, to: data.startsWith('0x095ea7b3') ? USDC : network.amm!.router, data, gas: 300_000n });
      assert.equal((await network.client.waitForTransactionReceipt({ hash, pollingInterval: 200 })).status, 'success');
    }
    await fulfilled(uid);
    const trade = await tradeOf(uid);
    const [surplus, volume] = trade.executedProtocolFees;
    assert.deepEqual(Object.keys(surplus!.policy), ['surplus']);
    // the cap binds: the surplus fee is 0.98 % of the volume before it (what the trader got plus the later fee)
    const before = BigInt(trade.buyAmount) + BigInt(volume!.amount) + BigInt(surplus!.amount);
    const share = Number(BigInt(surplus!.amount) * 10n ** 12n / before) / 1e12;
    assert.ok(Math.abs(share - 0.0098) < 1e-6, `surplus fee ${surplus!.amount} is ${share} of ${before}`);
    const executedFee = BigInt((await api.getOrder(uid)).executedFee!);
    const keptUsdc = await kept(USDC, trade.blockNumber);
    // the network fee is there on top of the protocol fees: the settlement kept more than they add up to
    assert.ok(keptUsdc > sum(trade.executedProtocolFees) && executedFee > 0n, `kept ${keptUsdc}, fees ${sum(trade.executedProtocolFees)}`);
  });

  let dust: Hex;
  it('a dust order that cannot pay its gas stays open and in the auctions', async () => {
    const order = makeOrder({ sellToken: WETH, buyToken: USDC, sellAmount: 10n ** 11n, buyAmount: 1n, validTo: Math.floor(Date.now() / 1000) + 1800 });
    const signature = await signOrder(trader as never, order);
    const placed = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'eip712', trader.address));
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    dust = placed.body as Hex;
    const first = await waitFor('the dust order in an auction', async () => {
      const a = await auctionOrder(dust);
      return a.order ? a : null;
    });
    // three auctions later (the positive witness) it is still there, open, never traded
    await waitFor('three later auctions with the dust order', async () => {
      const a = await auctionOrder(dust);
      return a.id >= first.id + 3 && a.order ? true : null;
    });
    assert.equal((await api.getOrder(dust)).status, 'open');
    assert.equal(((await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${dust}`)).body as unknown[]).length, 0);
  });

  it('after a restart with other policies, open orders get the new ones in the next auction', async () => {
    await stopLoop();
    startLoop({ policies: parseFeeSchedule('any:volume:0.001'), maxPartnerFee: 0.01, upcoming: null });
    const after = await waitFor('an auction under the new policies', async () => {
      const a = await auctionOrder(dust);
      return a.order && JSON.stringify(a.order.protocolFees) === JSON.stringify([{ volume: { factor: 0.001 } }]) ? a : null;
    });
    assert.ok(after.order);
  });

  it('an upcoming schedule takes over once its time has come', async () => {
    await stopLoop();
    const head = await network.client.getBlock({ blockTag: 'latest' });
    const from = (Number(head.timestamp) + 4) * 1000;
    startLoop({ policies: parseFeeSchedule('any:volume:0.001'), maxPartnerFee: 0.01, upcoming: { policies: parseFeeSchedule(DEFAULT_FEE_POLICIES.replace('0.0002', '0.0003')), from } });
    const current = await waitFor('an auction before the switch', async () => {
      const a = await auctionOrder(dust);
      return a.order ? a : null;
    });
    const switched = await waitFor('an auction under the upcoming schedule', async () => {
      const a = await auctionOrder(dust);
      return a.order && JSON.stringify(a.order.protocolFees) === JSON.stringify([{ surplus: { factor: 0.5, maxVolumeFactor: 0.0098 } }, { volume: { factor: 0.0003 } }]) ? a : null;
    });
    assert.ok(switched.id > current.id || JSON.stringify(current.order!.protocolFees).includes('0.0003'));
  });

  it('on a real chain a winner whose score does not cover its gas is not submitted (the order waits)', async () => {
    await stopLoop();
    startLoop(null, true); // as on a real chain; no protocol fee, so the score is the order's surplus
    // sells just a little more than its network fee: what is left of it is worth less than the settlement's gas
    const order = makeOrder({ sellToken: WETH, buyToken: USDC, sellAmount: 35n * 10n ** 13n, buyAmount: 1n, validTo: Math.floor(Date.now() / 1000) + 1800 });
    const signature = await signOrder(trader as never, order);
    const placed = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, signature, 'eip712', trader.address));
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    const uid = placed.body as Hex;
    const refused = await waitFor('a competition refusing it as unprofitable', async () => {
      const ranked = loop?.last?.ranked ?? [];
      return ranked.find((r) => r.solution.trades.some((t) => t.order.uid === uid) && r.filteredOut && r.reason?.startsWith('unprofitable')) ?? null;
    });
    assert.match(refused.reason!, /^unprofitable: score \d+ does not cover the settlement's gas/);
    assert.equal(loop!.last!.winner, null);
    assert.equal((await api.getOrder(uid)).status, 'open');
  });
});
