/**
 * Affiliate statistics on the real devnet with the node's own auction loop (issue 10 §3): orders placed with the
 * official SDK carry `metadata.referrer.code`; the first valid one to trade binds its owner (an unsigned presign order
 * posted in someone's name binds nobody); settled trades move the trader
 * and the affiliate statistics by their USD volume; the time cap (devnet time moved two days) and the volume cap
 * bound the eligible volume; recorded payouts reduce the next payout.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OrderBookApi, OrderSigningUtils, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, createWalletClient, erc20Abi, http, keccak256, maxUint256, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody } from './fixtures/orders.js';
import { affiliateTypedData } from '../src/aux/affiliate/affiliate-code.js';
import { runAffiliateCommand } from '../scripts/affiliate.js';

const CHAIN_ID = 31337;
const SETTLEMENT = '0x9008D19f58AAbD9eD0D60971565AA8510560ab41';
const override = { settlementContractOverride: { [CHAIN_ID]: SETTLEMENT } } as never;
const DAY = 86_400;

describe('affiliate statistics from settled trades', () => {
  let app: TestApp;
  let referred: PrivateKeyAccount;
  let affiliate: PrivateKeyAccount;
  let dai: Address;
  let usdc: Address;

  before(async () => {
    app = await startTestApp({
      AUCTIONS: 'true',
      AFFILIATE_REWARD_AMOUNT: '20', AFFILIATE_TRIGGER_VOLUME: '100', AFFILIATE_TIME_CAP_DAYS: '1', AFFILIATE_VOLUME_CAP: '1000',
      AFFILIATE_REVENUE_SPLIT_AFFILIATE_PCT: '40', AFFILIATE_REVENUE_SPLIT_TRADER_PCT: '35', AFFILIATE_REVENUE_SPLIT_DAO_PCT: '25',
    });
    const d = app.devnet!.describe();
    const traders = d.accounts.filter((a) => a.role === 'trader');
    referred = privateKeyToAccount(traders[0]!.privateKey);
    affiliate = privateKeyToAccount(traders[1]!.privateKey);
    dai = d.tokens.find((t) => t.symbol === 'DAI')!.address as Address;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address as Address;
  });
  after(async () => {
    await app?.stop();
  });

  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(app.devnet!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };

  function sdkFor(account: PrivateKeyAccount): OrderBookApi {
    setGlobalAdapter(new ViemAdapter({ provider: createPublicClient({ transport: http(app.devnet!.rpcUrl) }) as never, signer: account as never }) as never);
    return new OrderBookApi({ chainId: CHAIN_ID as never, env: 'prod', baseUrls: { [CHAIN_ID]: `${app.baseUrl}/devnet` } as never, backoffOpts: { numOfAttempts: 1 }, limiterOpts: { tokensPerInterval: 1000, interval: 'second' } } as never);
  }

  /** Places a DAI → USDC limit order through the SDK with the given app data; returns its UID. */
  async function placeOrder(account: PrivateKeyAccount, daiAmount: bigint, appDataDoc: string, opts: { fillable?: boolean } = {}): Promise<string> {
    const api = sdkFor(account);
    const appDataHash = keccak256(toHex(appDataDoc));
    await api.uploadAppData(appDataHash, appDataDoc);
    const { quote } = await api.getQuote({ sellToken: dai, buyToken: usdc, from: account.address, receiver: account.address, kind: 'sell' as never, sellAmountBeforeFee: String(daiAmount * 10n ** 18n), appData: appDataDoc } as never);
    const order = {
      sellToken: quote.sellToken, buyToken: quote.buyToken, receiver: account.address,
      sellAmount: (BigInt(quote.sellAmount) + BigInt(quote.feeAmount)).toString(),
      // unfillable orders ask for far more than the market gives, and stay open
      buyAmount: (opts.fillable === false ? BigInt(quote.buyAmount) * 10n : (BigInt(quote.buyAmount) * 95n) / 100n).toString(),
      // a week of wall-clock time: still valid after the devnet's clock is moved two days ahead
      validTo: Math.floor(Date.now() / 1000) + 7 * DAY, appData: appDataHash, feeAmount: '0', kind: quote.kind,
      partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
    };
    const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, account as never, override);
    return api.sendOrder({ ...order, appData: appDataDoc, appDataHash, signature: signed.signature, signingScheme: signed.signingScheme, from: account.address } as never);
  }

  async function settled(uid: string): Promise<{ executedSellAmount: string; creationDate: string }> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const order = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body;
      if (order.status === 'fulfilled') return order;
      if (Date.now() > deadline) throw new Error(`order ${uid} not settled within 90 s (status ${order.status})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Polls GET `path` until `done(body)`; fails with the last body after 60 s (the bound). */
  async function until(path: string, done: (body: any) => boolean): Promise<any> {
    const deadline = Date.now() + 60_000;
    let last: unknown;
    for (;;) {
      const res = await call(app.baseUrl, 'GET', path);
      last = res.body;
      if (res.status === 200 && done(res.body)) return res.body;
      if (Date.now() > deadline) throw new Error(`${path} did not reach the expected state within 60 s: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  const usdPriceOfDai = async () => (await call(app.baseUrl, 'GET', `/${CHAIN_ID}/tokens/${dai}/usdPrice`)).body.price as number;
  const referrer = (code: string) => JSON.stringify({ appCode: 'batchbook-test', metadata: { referrer: { code } }, version: '1.14.0' });
  const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) <= expected * 0.01, `${what}: ${actual} ≉ ${expected}`);

  let firstTradeUsd = 0;

  it('binds by the first order carrying a valid code (not an unknown code, an old {address} referrer or a self-referral) and counts its settled trade', async () => {
    const signedMessage = await affiliate.signTypedData(affiliateTypedData('CoW Swap Affiliate', affiliate.address, 'FRIENDS'));
    assert.equal((await call(app.baseUrl, 'POST', `/affiliate/${affiliate.address}`, { walletAddress: affiliate.address, code: 'friends', signedMessage })).status, 201);

    await placeOrder(referred, 50n, referrer('UNKNOWN-CODE'), { fillable: false });
    await placeOrder(referred, 50n, JSON.stringify({ appCode: 'batchbook-test', metadata: { referrer: { address: affiliate.address } }, version: '1.13.0' }), { fillable: false });
    await placeOrder(affiliate, 50n, referrer('FRIENDS'), { fillable: false }); // self-referral
    const uid = await placeOrder(referred, 300n, referrer('friends'));
    const order = await settled(uid);

    const price = await usdPriceOfDai();
    firstTradeUsd = (Number(order.executedSellAmount) / 1e18) * price;
    const trader = await until(`/affiliate/trader-stats/${referred.address}`, (b) => b.eligible_volume > 0);
    assert.equal(trader.bound_referrer_code, 'FRIENDS');
    assert.equal(trader.linked_since, new Date(order.creationDate).toISOString());
    near(trader.eligible_volume, firstTradeUsd, 'eligible volume = the trade’s USD volume');
    const rewards = Math.floor(trader.eligible_volume / 100);
    assert.equal(rewards, 3);
    assert.equal(trader.total_earned, rewards * 20 * 0.35);
    assert.equal(trader.trigger_volume, 100);
    assert.ok(Math.abs(trader.left_to_next_rewards - ((rewards + 1) * 100 - trader.eligible_volume)) < 1e-6);
    assert.ok(new Date(trader.rewards_end).getTime() > Date.now() + DAY * 1000 - 120_000, 'rewards end a day after the first trade');

    const stats = await until(`/affiliate/affiliate-stats/${affiliate.address}`, (b) => b.total_volume > 0);
    assert.deepEqual(
      { code: stats.referrer_code, volume: stats.total_volume, earned: stats.total_earned, paid: stats.paid_out, next: stats.next_payout, active: stats.active_traders, total: stats.total_traders },
      { code: 'FRIENDS', volume: trader.eligible_volume, earned: rewards * 20 * 0.4, paid: 0, next: rewards * 20 * 0.4, active: 1, total: 1 },
    );
    assert.ok(Date.parse(stats.lastUpdatedAt) > 0);
    // the affiliate's own order did not bind them
    assert.equal((await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${affiliate.address}`)).status, 404);
  });

  it('an unsigned presign order posted in a victim\'s name with an attacker\'s code binds nobody; the victim\'s own signed referred order binds the victim within a minute of its trade', async () => {
    const attacker = privateKeyToAccount(generatePrivateKey());
    const signedMessage = await attacker.signTypedData(affiliateTypedData('CoW Swap Affiliate', attacker.address, 'ATTACKER'));
    assert.equal((await call(app.baseUrl, 'POST', `/affiliate/${attacker.address}`, { walletAddress: attacker.address, code: 'ATTACKER', signedMessage })).status, 201);
    const honest = privateKeyToAccount(generatePrivateKey()); // (another affiliate than FRIENDS, whose figures the next tests check)
    const honestSigned = await honest.signTypedData(affiliateTypedData('CoW Swap Affiliate', honest.address, 'HONEST'));
    assert.equal((await call(app.baseUrl, 'POST', `/affiliate/${honest.address}`, { walletAddress: honest.address, code: 'HONEST', signedMessage: honestSigned })).status, 201);
    const victim = privateKeyToAccount(generatePrivateKey());
    await rpc('anvil_setBalance', [victim.address, toHex(10n ** 19n)]);
    await (await app.devnet!.faucet({ address: victim.address, token: 'DAI', amount: '500' })).waitForReceipt();
    const wallet = createWalletClient({ account: victim, transport: http(app.devnet!.rpcUrl), chain: { id: CHAIN_ID } as never });
    const hash = await wallet.writeContract({ address: dai, abi: erc20Abi, functionName: 'approve', args: [app.devnet!.describe().contracts.vaultRelayer as Address, maxUint256], chain: null });
    await createPublicClient({ transport: http(app.devnet!.rpcUrl) }).waitForTransactionReceipt({ hash });

    // the attack: a presign order needs no signature, so anyone may post one with the victim as `from`
    const attackDoc = referrer('ATTACKER');
    const attackHash = keccak256(toHex(attackDoc));
    await sdkFor(attacker).uploadAppData(attackHash, attackDoc);
    const attackOrder = makeOrder({ sellToken: dai, buyToken: usdc, sellAmount: 10n ** 18n, appData: attackHash });
    const posted = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(attackOrder, victim.address, 'presign', victim.address));
    assert.equal(posted.status, 201, JSON.stringify(posted.body));

    // the victim's own order, signed, referred by HONEST, settles
    const own = await settled(await placeOrder(victim, 100n, referrer('HONEST')));
    const bound = await until(`/affiliate/trader-stats/${victim.address}`, (b) => b.eligible_volume > 0);
    assert.equal(bound.bound_referrer_code, 'HONEST', 'bound by the order the victim signed, not the one posted in their name');
    assert.equal(bound.linked_since, new Date(own.creationDate).toISOString());
    const attackerStats = (await call(app.baseUrl, 'GET', `/affiliate/affiliate-stats/${attacker.address}`)).body;
    assert.deepEqual([attackerStats.total_traders, attackerStats.total_volume], [0, 0]);
  });

  it('time cap: a trade two days later (devnet time moved) adds to the total volume but not to the eligible volume', async () => {
    await rpc('evm_increaseTime', [2 * DAY]);
    await rpc('evm_mine');
    const uid = await placeOrder(referred, 200n, referrer('FRIENDS'));
    const order = await settled(uid);
    const secondUsd = (Number(order.executedSellAmount) / 1e18) * (await usdPriceOfDai());
    const stats = await until(`/affiliate/affiliate-stats/${affiliate.address}`, (b) => b.total_volume > firstTradeUsd * 1.2);
    near(stats.total_volume, firstTradeUsd + secondUsd, 'total volume counts both trades');
    assert.equal(stats.active_traders, 0, 'outside the time cap');
    const trader = (await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${referred.address}`)).body;
    near(trader.eligible_volume, firstTradeUsd, 'eligible volume unchanged');
    assert.equal(trader.left_to_next_rewards, 0, 'no further reward after the time cap');
    assert.ok(Date.parse(trader.rewards_end) < Date.parse(trader.lastUpdatedAt));
  });

  it('volume cap: a new referred trader’s large trade counts up to volumeCap; payouts reduce the next payout', async () => {
    const fresh = privateKeyToAccount(generatePrivateKey());
    await rpc('anvil_setBalance', [fresh.address, toHex(10n ** 19n)]);
    await (await app.devnet!.faucet({ address: fresh.address, token: 'DAI', amount: '2000' })).waitForReceipt();
    const wallet = createWalletClient({ account: fresh, transport: http(app.devnet!.rpcUrl), chain: { id: CHAIN_ID } as never });
    const hash = await wallet.writeContract({ address: dai, abi: erc20Abi, functionName: 'approve', args: [app.devnet!.describe().contracts.vaultRelayer as Address, maxUint256], chain: null });
    await createPublicClient({ transport: http(app.devnet!.rpcUrl) }).waitForTransactionReceipt({ hash });

    await settled(await placeOrder(fresh, 1200n, referrer('FRIENDS')));
    const trader = await until(`/affiliate/trader-stats/${fresh.address}`, (b) => b.eligible_volume > 0);
    assert.equal(trader.eligible_volume, 1000, 'capped at volumeCap');
    assert.equal(trader.total_earned, 10 * 20 * 0.35);
    assert.equal(trader.left_to_next_rewards, 0);
    const stats = await until(`/affiliate/affiliate-stats/${affiliate.address}`, (b) => b.total_traders === 2);
    const earned = (3 + 10) * 20 * 0.4;
    assert.equal(stats.total_earned, earned);
    assert.equal(stats.active_traders, 1);

    const out: string[] = [];
    await runAffiliateCommand(['payout', affiliate.address, '50', '--note', 'first payout'], { db: app.database.db, print: (l) => out.push(l) });
    await runAffiliateCommand(['payout', fresh.address, '20.5'], { db: app.database.db, print: (l) => out.push(l) });
    const after = (await call(app.baseUrl, 'GET', `/affiliate/affiliate-stats/${affiliate.address}`)).body;
    assert.deepEqual([after.paid_out, after.next_payout], [50, earned - 50]);
    const traderAfter = (await call(app.baseUrl, 'GET', `/affiliate/trader-stats/${fresh.address}`)).body;
    assert.deepEqual([traderAfter.paid_out, traderAfter.next_payout], [20.5, 70 - 20.5]);
    await runAffiliateCommand(['list'], { db: app.database.db, print: (l) => out.push(l) });
    assert.ok(out.some((l) => l.includes('first payout') && l.toLowerCase().includes(affiliate.address.toLowerCase())), out.join('\n'));
    await assert.rejects(runAffiliateCommand(['payout', affiliate.address, '1000'], { db: app.database.db, print: () => {} }), /exceeds/);
  });
});
