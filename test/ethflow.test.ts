/**
 * ETH-flow end to end (issue 21) on the devnet, as a client sees it: viem against the devnet's eth-flow contract
 * (its ABI, never project internals) and the node's HTTP API, with the node's own auction loop settling orders.
 * A filled order (balances exact), a placement error that never settles, a stranger's early invalidation refused, a
 * user-invalidated order, an expired order refunded by the built-in refunder, and a reorg that removes a placement.
 * Everywhere the user shows, it is the sender of createOrder, never the contract: the dashboard's trader and order
 * owner, the notifications (a real webhook receiver subscribed by the sender) and the affiliate program (a referred
 * eth-flow order binds and counts the sender).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  BaseError,
  ContractFunctionRevertedError,
  createWalletClient,
  http,
  keccak256,
  parseAbi,
  stringToBytes,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { affiliateTypedData } from '../src/aux/affiliate/affiliate-code.js';
import { subscribeTypedData } from '../src/aux/notifications/subscription-signatures.js';
import { ETHFLOW_ABI, ethFlowOrderUid, orderDomain, type EthFlowOrderData } from '../src/protocol/index.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { trading, E18, type Trading } from './fixtures/trading.js';
import { waitFor } from './fixtures/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from './fixtures/webhook-receiver.js';

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const APP_DATA = JSON.stringify({ appCode: 'ethflow-test', metadata: {}, version: '1.3.0' });
const APP_DATA_HASH = keccak256(stringToBytes(APP_DATA));
/** app data carrying bob's affiliate code: the filled order is a referred one */
const REFERRED_APP_DATA = JSON.stringify({ appCode: 'ethflow-test', metadata: { referrer: { code: 'ETHFLOW' } }, version: '1.14.0' });
const REFERRED_APP_DATA_HASH = keccak256(stringToBytes(REFERRED_APP_DATA));

describe('ETH-flow on the devnet (issue 21)', () => {
  let app: TestApp;
  let t: Trading;
  let client: PublicClient;
  let ethFlow: Address;
  let alice: LocalAccount;
  let bob: LocalAccount;
  let receiver: WebhookReceiver;
  const api = (path: string) => call(app.baseUrl, 'GET', `/devnet/api/v1${path}`);

  const wallet = (account: LocalAccount) => createWalletClient({ account, chain: client.chain, transport: http(app.devnet!.rpcUrl) });
  async function send(hash: Promise<Hex>): Promise<TransactionReceipt> {
    const receipt = await client.waitForTransactionReceipt({ hash: await hash, pollingInterval: 200 });
    assert.equal(receipt.status, 'success');
    return receipt;
  }
  const create = (account: LocalAccount, order: EthFlowOrderData) =>
    send(wallet(account).writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value: order.sellAmount + order.feeAmount, chain: client.chain, account }));
  const invalidate = (account: LocalAccount, order: EthFlowOrderData) =>
    send(wallet(account).writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'invalidateOrder', args: [order], chain: client.chain, account }));
  const uidOf = (order: EthFlowOrderData) => ethFlowOrderUid(order, { ethFlow, wrappedNative: t.tokens.WETH, domain: orderDomain(31337) });
  const gasCost = (r: TransactionReceipt) => r.gasUsed * r.effectiveGasPrice;
  const chainTime = async () => Number((await client.getBlock({ blockTag: 'latest' })).timestamp);
  const orderOf = async (uid: Hex) => {
    const res = await api(`/orders/${uid}`);
    return res.status === 200 ? (res.body as Record<string, any>) : null;
  };

  /** the chain's clock past the order's deadline now, rather than after its seconds of interval mining */
  async function pastDeadline(order: EthFlowOrderData): Promise<void> {
    const ahead = order.validTo + 1 - (await chainTime());
    if (ahead > 0) await t.rpc('evm_increaseTime', [ahead]);
    await t.rpc('evm_mine', []);
  }

  let sequence = 0;
  /** an order far outside the market: never settled */
  async function unfillable(overrides: Partial<EthFlowOrderData> = {}): Promise<EthFlowOrderData> {
    return {
      buyToken: t.tokens.USDC,
      receiver: alice.address,
      sellAmount: E18 / 100n,
      buyAmount: 10n ** 15n + BigInt(++sequence),
      appData: APP_DATA_HASH,
      feeAmount: 0n,
      validTo: (await chainTime()) + 3600,
      partiallyFillable: false,
      quoteId: 0n,
      ...overrides,
    };
  }

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    t = trading(app);
    client = app.networks[0]!.client as unknown as PublicClient;
    ethFlow = app.devnet!.describe().contracts.ethFlow.toLowerCase() as Address;
    [alice, bob] = t.traders as [LocalAccount, LocalAccount];
    assert.equal((await call(app.baseUrl, 'PUT', `/devnet/api/v1/app_data/${APP_DATA_HASH}`, { fullAppData: APP_DATA })).status < 300, true);
    // the sender subscribes a webhook to every notification type
    receiver = await startWebhookReceiver();
    const deadline = Math.floor(Date.now() / 1000) + 3600;
    const target = `${receiver.url}/alice`;
    const signature = await alice.signTypedData(subscribeTypedData({ account: alice.address, channel: 'webhook', target, deadline }));
    const subscribed = await call(app.baseUrl, 'POST', `/accounts/${alice.address}/subscriptions`, { channel: 'webhook', target, deadline, signature });
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    receiver.setSecret('/alice', subscribed.body.secret);
    // bob is an affiliate: code ETHFLOW, registered before any referred order
    const signedMessage = await bob.signTypedData(affiliateTypedData('CoW Swap Affiliate', bob.address, 'ETHFLOW'));
    assert.equal((await call(app.baseUrl, 'POST', `/affiliate/${bob.address}`, { walletAddress: bob.address, code: 'ETHFLOW', signedMessage })).status, 201);
  });
  after(async () => {
    await app?.stop();
    await receiver?.close();
  });
  /** the sender's verified webhook deliveries of this type for this order */
  const delivered = (type: string, uid: Hex) => receiver.received.filter((r) => r.path === '/alice' && r.body.type === type && r.body.metadata?.orderId === uid);

  it('GET /devnet lists the contract', async () => {
    const res = await call(app.baseUrl, 'GET', '/devnet');
    assert.equal(res.body.contracts.ethFlow.toLowerCase(), ethFlow);
  });

  let placementError: EthFlowOrderData;
  it('a non-zero signed fee is shown with placement error nonZeroFee', async () => {
    placementError = await unfillable({ feeAmount: 1n, buyAmount: 1n });
    await create(alice, placementError);
    const order = await waitFor('the order with a placement error', () => orderOf(uidOf(placementError)));
    assert.deepEqual(order.onchainOrderData, { sender: alice.address.toLowerCase(), placementError: 'nonZeroFee' });
    assert.equal(order.status, 'open');
    assert.equal(order.class, 'market');

    // an unknown buy token: no price can be had, so preValidationError (and the indexer goes on)
    const unknownToken = await unfillable({ buyToken: '0x00000000000000000000000000000000deadbeef' });
    await create(alice, unknownToken);
    const unknown = await waitFor('the order with an unknown token', () => orderOf(uidOf(unknownToken)));
    assert.equal(unknown.onchainOrderData.placementError, 'preValidationError');

    const both = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders/by_uids', [uidOf(placementError), uidOf(unknownToken)]);
    assert.equal(both.status, 200);
    assert.deepEqual(both.body.map((o: Record<string, any>) => o.order.onchainOrderData.placementError).sort(), ['nonZeroFee', 'preValidationError']);
    assert.equal((await api(`/orders/${uidOf(unknownToken)}/status`)).status, 200);
    // only invalidateOrder cancels it, as every EIP-1271 order
    const deleted = await call(app.baseUrl, 'DELETE', `/devnet/api/v1/orders/${uidOf(unknownToken)}`, { signature: `0x${'11'.repeat(65)}`, signingScheme: 'eip712' });
    assert.equal(deleted.body.errorType, 'OnChainOrder');
  });

  it('a market-priced order placed with createOrder is indexed within 3 blocks and settled: exact balances', async () => {
    const amount = E18 / 2n;
    assert.equal((await call(app.baseUrl, 'PUT', `/devnet/api/v1/app_data/${REFERRED_APP_DATA_HASH}`, { fullAppData: REFERRED_APP_DATA })).status < 300, true);
    const quote = await call(app.baseUrl, 'POST', '/devnet/api/v1/quote', {
      sellToken: t.tokens.WETH, buyToken: t.tokens.USDC, from: alice.address, receiver: alice.address, kind: 'sell',
      sellAmountBeforeFee: amount.toString(), appData: REFERRED_APP_DATA, appDataHash: REFERRED_APP_DATA_HASH, signingScheme: 'eip1271', onchainOrder: true, verificationGasLimit: 0,
    });
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    const order: EthFlowOrderData = {
      buyToken: t.tokens.USDC,
      receiver: alice.address,
      sellAmount: BigInt(quote.body.quote.sellAmount) + BigInt(quote.body.quote.feeAmount),
      buyAmount: (BigInt(quote.body.quote.buyAmount) * 995n) / 1000n,
      appData: REFERRED_APP_DATA_HASH,
      feeAmount: 0n,
      validTo: (await chainTime()) + 1800,
      partiallyFillable: false,
      quoteId: BigInt(quote.body.id),
    };
    const uid = uidOf(order);
    const ethBefore = await client.getBalance({ address: alice.address });
    const usdcBefore = await client.readContract({ address: t.tokens.USDC, abi: ERC20, functionName: 'balanceOf', args: [alice.address] });
    const placed = await create(alice, order);
    const record = await waitFor('the eth-flow order in the API', () => orderOf(uid), 60_000);
    const visibleAt = await client.getBlockNumber({ cacheTime: 0 });
    assert.ok(visibleAt - placed.blockNumber <= 3n, `visible ${visibleAt - placed.blockNumber} blocks after its placement`);

    assert.equal(record.uid, uid);
    assert.equal(record.owner, ethFlow);
    assert.equal(record.sellToken, t.tokens.WETH);
    assert.equal(record.validTo, 4294967295);
    assert.equal(record.signingScheme, 'eip1271');
    assert.equal(record.signature, ethFlow);
    assert.equal(record.class, 'limit');
    assert.equal(record.feeAmount, '0');
    assert.equal(record.sellAmount, order.sellAmount.toString());
    assert.equal(record.buyAmount, order.buyAmount.toString());
    assert.equal(record.receiver, alice.address.toLowerCase());
    assert.equal(record.fullAppData, REFERRED_APP_DATA);
    assert.equal(record.onchainUser, alice.address.toLowerCase());
    assert.deepEqual(record.onchainOrderData, { sender: alice.address.toLowerCase(), placementError: null });
    assert.deepEqual(record.ethflowData, { userValidTo: order.validTo, refundTxHash: null, isRefunded: false });
    assert.deepEqual(record.interactions.pre, [{ target: ethFlow, value: '0', callData: '0x4c84c1c8' }]);

    const done = await waitFor('the order fulfilled', async () => {
      const o = await orderOf(uid);
      return o?.status === 'fulfilled' ? o : null;
    }, 120_000);
    assert.equal(done.executedSellAmount, order.sellAmount.toString());
    // the settlement ran the contract's wrapAll: WETH's Deposit to the contract, in the same transaction as the trade
    const [settled] = (await api(`/trades?orderUid=${uid}`)).body as Array<{ txHash: Hex }>;
    const settlement = await client.getTransactionReceipt({ hash: settled!.txHash });
    const deposit = settlement.logs.find((l) => l.address.toLowerCase() === t.tokens.WETH && l.topics[0] === '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c');
    assert.ok(deposit, 'a WETH Deposit in the settlement');
    assert.equal(`0x${deposit.topics[1]!.slice(26)}`, ethFlow);
    assert.ok(BigInt(deposit.data) >= order.sellAmount);
    const usdcAfter = await client.readContract({ address: t.tokens.USDC, abi: ERC20, functionName: 'balanceOf', args: [alice.address] });
    assert.ok(usdcAfter - usdcBefore >= order.buyAmount, 'at least the buy amount');
    assert.equal(BigInt(done.executedBuyAmount), usdcAfter - usdcBefore);
    // alice spent exactly the sell amount plus gas (she sent nothing else meanwhile)
    assert.equal(await client.getBalance({ address: alice.address }), ethBefore - order.sellAmount - gasCost(placed));

    // the sender's account and the contract's list it; trades by uid and by the sender as owner
    const mine = await api(`/account/${alice.address}/orders?limit=1000`);
    assert.ok(mine.body.some((o: { uid: string }) => o.uid === uid));
    const contracts = await api(`/account/${ethFlow}/orders?limit=1000`);
    assert.ok(contracts.body.some((o: { uid: string }) => o.uid === uid));
    for (const path of [`/v1/trades?orderUid=${uid}`, `/v1/trades?owner=${alice.address}`, `/v2/trades?orderUid=${uid}`, `/v2/trades?owner=${alice.address}`]) {
      const trades = await call(app.baseUrl, 'GET', `/devnet/api${path}`);
      const trade = trades.body.find((x: { orderUid: string }) => x.orderUid === uid);
      assert.ok(trade, path);
      assert.equal(trade.owner, ethFlow);
      assert.equal(trade.sellToken, t.tokens.WETH);
    }

    // the dashboard shows alice, not the contract: the trade's trader, the order's sender, the lifecycle's trades
    const dashTrades = await call(app.baseUrl, 'GET', '/dashboard/api/devnet/trades?limit=100');
    const dashTrade = dashTrades.body.find((x: { orderUid: string }) => x.orderUid === uid);
    assert.ok(dashTrade, 'the trade on the dashboard');
    assert.equal(dashTrade.trader, alice.address.toLowerCase());
    assert.equal(dashTrade.owner, ethFlow);
    const dashOrders = await call(app.baseUrl, 'GET', '/dashboard/api/devnet/orders?limit=100');
    assert.equal(dashOrders.body.find((o: { uid: string }) => o.uid === uid)?.onchainOrderData.sender, alice.address.toLowerCase());
    const lifecycle = await call(app.baseUrl, 'GET', `/dashboard/api/devnet/orders/${uid}/lifecycle`);
    assert.deepEqual(lifecycle.body.trades.map((x: { trader: string }) => x.trader), [alice.address.toLowerCase()]);

    // alice's webhook receives order_filled for it; nothing is produced for the contract's address
    const [filled] = await waitFor('order_filled delivered to the sender', () => {
      const found = delivered('order_filled', uid);
      return found.length > 0 ? found : null;
    }, 120_000);
    assert.equal(filled!.body.account.toLowerCase(), alice.address.toLowerCase());
    const alices = await call(app.baseUrl, 'GET', `/accounts/${alice.address}/notifications?limit=100`);
    assert.ok(alices.body.some((n: { type: string; metadata: { orderId: string } }) => n.type === 'order_filled' && n.metadata.orderId === uid));
    const contractNotes = await call(app.baseUrl, 'GET', `/accounts/${ethFlow}/notifications?limit=100`);
    assert.equal(contractNotes.status, 200);
    assert.deepEqual(contractNotes.body, []);

    // the referred order bound alice (not the contract) to bob's code, and her trade counts
    const bound = await waitFor('alice bound', async () => {
      const res = await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${alice.address}`);
      return res.status === 200 ? res.body : null;
    }, 90_000);
    assert.equal(bound.bound_referrer_code, 'ETHFLOW');
    let last: unknown;
    const trader = await waitFor('alice\'s volume counted', async () => {
      const res = await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${alice.address}`);
      last = res.body;
      return res.body.eligible_volume > 0 ? res.body : null;
    }, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(last)}`);
    });
    assert.equal((await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${ethFlow}`)).status, 404);
    const stats = await call(app.baseUrl, 'GET', `/affiliate/affiliate-stats/${bob.address}`);
    assert.equal(stats.body.total_traders, 1);
    assert.equal(stats.body.total_volume, trader.eligible_volume);

    // the order with a placement error, placed before it, was never settled
    const stale = await orderOf(uidOf(placementError));
    assert.equal(stale!.executedSellAmount, '0');
    assert.equal(stale!.status, 'open');
    const auction = await api('/auction');
    assert.equal(auction.body.orders.some((o: { uid: string }) => o.uid === uidOf(placementError)), false);
  });

  it('a stranger cannot invalidate a live order; its creator can: cancelled, ETH back', async () => {
    const order = await unfillable();
    await create(alice, order);
    const uid = uidOf(order);
    await waitFor('the order', () => orderOf(uid));
    await assert.rejects(
      client.simulateContract({ account: bob, address: ethFlow, abi: ETHFLOW_ABI, functionName: 'invalidateOrder', args: [order] }),
      (err: unknown) => {
        const reverted = (err as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
        assert.equal(reverted?.data?.errorName, 'NotAllowedToInvalidateOrder');
        assert.deepEqual(reverted?.data?.args, [uid.slice(0, 66)]);
        return true;
      },
    );
    const before = await client.getBalance({ address: alice.address });
    const receipt = await invalidate(alice, order);
    assert.equal(await client.getBalance({ address: alice.address }), before + order.sellAmount - gasCost(receipt));
    const cancelled = await waitFor('the order cancelled', async () => {
      const o = await orderOf(uid);
      return o?.status === 'cancelled' ? o : null;
    });
    assert.equal(cancelled.invalidated, true);
    assert.equal(cancelled.ethflowData.refundTxHash, null);
    // the creator is told (order_cancelled), not the contract
    await waitFor('order_cancelled delivered to the sender', () => delivered('order_cancelled', uid).length > 0 || null, 60_000);
    assert.equal((await call(app.baseUrl, 'GET', `/accounts/${ethFlow}/notifications?limit=100`)).body.length, 0);
  });

  it('an order that expires unfilled turns expired and the built-in refunder sends its ETH back to its creator', async () => {
    const order = await unfillable({ validTo: (await chainTime()) + 15 });
    await create(alice, order);
    const uid = uidOf(order);
    await waitFor('the order', () => orderOf(uid));
    const before = await client.getBalance({ address: alice.address });
    await pastDeadline(order);
    const expired = await waitFor('the order expired', async () => {
      const o = await orderOf(uid);
      return o?.status === 'expired' ? o : null;
    }, 60_000);
    assert.equal(expired.invalidated, false);
    const refunded = await waitFor('the refund indexed', async () => {
      const o = await orderOf(uid);
      return o?.ethflowData?.refundTxHash ? o : null;
    }, 90_000);
    assert.equal(refunded.status, 'expired');
    assert.equal(refunded.invalidated, false);
    assert.equal(refunded.ethflowData.isRefunded, true);
    const receipt = await client.getTransactionReceipt({ hash: refunded.ethflowData.refundTxHash });
    assert.equal(receipt.to?.toLowerCase(), ethFlow);
    assert.notEqual(receipt.from.toLowerCase(), alice.address.toLowerCase());
    // the refunder paid the gas: alice gets exactly her ETH back
    assert.equal(await client.getBalance({ address: alice.address }), before + order.sellAmount);
    const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid.slice(0, 66) as Hex] });
    assert.equal(owner.toLowerCase(), '0xffffffffffffffffffffffffffffffffffffffff');
  });

  it('a reorg that removes a placement removes the order', async () => {
    const snapshot = await t.rpc<Hex>('evm_snapshot', []);
    const order = await unfillable();
    const placed = await create(bob, { ...order, receiver: bob.address });
    const uid = uidOf({ ...order, receiver: bob.address });
    await waitFor('the order', () => orderOf(uid));
    assert.equal((await api(`/account/${bob.address}/orders`)).body.some((o: { uid: string }) => o.uid === uid), true);
    assert.equal(await t.rpc('evm_revert', [snapshot]), true);
    // the chain grows past the block that held the placement, on the other branch
    await waitFor('the chain past the lost block', async () => (await client.getBlockNumber({ cacheTime: 0 })) > placed.blockNumber + 1n, 60_000);
    await waitFor('the order gone', async () => (await api(`/orders/${uid}`)).status === 404, 60_000);
    assert.equal((await api(`/account/${bob.address}/orders`)).body.some((o: { uid: string }) => o.uid === uid), false);
    const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid.slice(0, 66) as Hex] });
    assert.equal(owner, '0x0000000000000000000000000000000000000000');
  });

  it('a reorg that removes an invalidation puts the order back to open', async () => {
    const order = await unfillable();
    await create(alice, order);
    const uid = uidOf(order);
    await waitFor('the order', () => orderOf(uid));
    const snapshot = await t.rpc<Hex>('evm_snapshot', []);
    const invalidated = await invalidate(alice, order);
    await waitFor('the order cancelled', async () => (await orderOf(uid))?.status === 'cancelled');
    assert.equal(await t.rpc('evm_revert', [snapshot]), true);
    await waitFor('the chain past the lost block', async () => (await client.getBlockNumber({ cacheTime: 0 })) > invalidated.blockNumber + 1n, 60_000);
    const back = await waitFor('the order open again', async () => {
      const o = await orderOf(uid);
      return o?.status === 'open' ? o : null;
    }, 60_000);
    assert.equal(back.invalidated, false);
    assert.equal(back.ethflowData.refundTxHash, null);
    // as the chain has it: stored under alice, not invalidated
    const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid.slice(0, 66) as Hex] });
    assert.equal(owner.toLowerCase(), alice.address.toLowerCase());
  });

  it('a reorg that removes a refund forgets it; the refunder refunds again on the new branch', async () => {
    const order = await unfillable({ validTo: (await chainTime()) + 15 });
    await create(alice, order);
    const uid = uidOf(order);
    await waitFor('the order', () => orderOf(uid));
    const snapshot = await t.rpc<Hex>('evm_snapshot', []);
    await pastDeadline(order);
    const first = await waitFor('the refund indexed', async () => (await orderOf(uid))?.ethflowData?.refundTxHash as Hex | undefined, 90_000);
    const lost = await client.getTransactionReceipt({ hash: first });
    assert.equal(await t.rpc('evm_revert', [snapshot]), true);
    await pastDeadline(order); // the new branch's clock starts from the snapshot's
    await waitFor('the chain past the lost block', async () => (await client.getBlockNumber({ cacheTime: 0 })) > lost.blockNumber + 1n, 60_000);
    // the refund the API shows must be one of the new branch: a receipt in a block other than the lost one
    const again = await waitFor('a refund on the new branch', async () => {
      const o = await orderOf(uid);
      const hash = o?.ethflowData?.refundTxHash as Hex | undefined;
      if (!hash) return null;
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
      return receipt && receipt.blockHash !== lost.blockHash ? { o, receipt } : null;
    }, 120_000);
    assert.equal(again.receipt.status, 'success');
    assert.equal(again.receipt.to?.toLowerCase(), ethFlow);
    assert.equal(again.o!.status, 'expired');
    assert.equal(again.o!.invalidated, false);
    const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid.slice(0, 66) as Hex] });
    assert.equal(owner.toLowerCase(), '0xffffffffffffffffffffffffffffffffffffffff');
  });
});
