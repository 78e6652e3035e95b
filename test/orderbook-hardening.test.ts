/**
 * Order-book rules against hostile input (issue 14, points 1–4) on the real devnet: presign orders cannot lock
 * a victim out of the limit-order cap, fees are refused since CIP-38, native ETH is quoted as the wrapped token,
 * the EIP-1271 check is gas-capped and strictly decoded, every number in a request is bounded, app data is kept
 * only with an accepted order, and expired quotes are pruned.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createPublicClient, createTestClient, createWalletClient, http, keccak256, parseAbi, toHex, type Hex } from 'viem';
import { BUY_ETH_ADDRESS } from '../src/protocol/index.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, nowSeconds, orderBody, signOrder } from './fixtures/orders.js';

const DAY = 86400;

describe('order-book hardening (issue 14)', () => {
  let app: TestApp;
  let shift = 0;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let weth: Hex;
  let usdc: Hex;
  const submit = (body: unknown) => call(app.baseUrl, 'POST', '/devnet/api/v1/orders', body);
  const quote = (body: Record<string, unknown>) => call(app.baseUrl, 'POST', '/devnet/api/v1/quote', body);
  const expectError = (res: { status: number; body: any }, status: number, errorType: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.errorType, errorType, JSON.stringify(res.body));
  };

  before(async () => {
    app = await startTestApp({}, { now: () => Math.floor(Date.now() / 1000) + shift });
    const d = app.devnet!.describe();
    trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    weth = d.tokens.find((t) => t.symbol === 'WETH')!.address.toLowerCase() as Hex;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
  });
  after(async () => {
    await app?.stop();
  });

  describe('1. presign lock-out', () => {
    const victim = privateKeyToAccount(generatePrivateKey());
    // far outside the market: 1 atom of WETH for a billion USDC
    const outOfMarket = (i: number, validTo = nowSeconds() + 30 * DAY) =>
      makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n + BigInt(i), buyAmount: 10n ** 15n, validTo });

    it('unsigned presign orders posted for a victim do not count toward the victim’s cap of limit orders', async () => {
      for (let i = 0; i < 11; i++) {
        const res = await submit(orderBody(outOfMarket(i), '0x', 'presign', victim.address));
        assert.equal(res.status, 201, `presign order ${i}: ${JSON.stringify(res.body)}`);
      }
      // the victim's own out-of-market order (signed, funded, approved) is still accepted
      const funded = await app.devnet!.faucet({ address: victim.address, token: 'WETH', amount: '1' });
      await funded.waitForReceipt();
      await createTestClient({ mode: 'anvil', transport: http(app.devnet!.rpcUrl) }).setBalance({ address: victim.address, value: 10n ** 18n });
      const wallet = createWalletClient({ account: victim, transport: http(app.devnet!.rpcUrl) });
      const publicClient = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
      const approval = await wallet.writeContract({
        chain: null, address: weth, abi: parseAbi(['function approve(address spender, uint256 amount) returns (bool)']),
        functionName: 'approve', args: [app.devnet!.deployment.contracts.vaultRelayer, 2n ** 255n],
      });
      await publicClient.waitForTransactionReceipt({ hash: approval, pollingInterval: 100 });
      const order = outOfMarket(100);
      const res = await submit(orderBody(order, await signOrder(victim, order), 'eip712', victim.address));
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });

    it('a presign order’s validity is bounded like an eip712 limit order’s (ExcessiveValidTo)', async () => {
      const order = outOfMarket(200, nowSeconds() + 2 * 365 * DAY);
      expectError(await submit(orderBody(order, '0x', 'presign', victim.address)), 400, 'ExcessiveValidTo');
    });

    it('an unsigned presign order expires when it has waited too long for its on-chain signature', async () => {
      const res = await submit(orderBody(outOfMarket(300, nowSeconds() + 60 * DAY), '0x', 'presign', victim.address));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`)).body.status, 'presignaturePending');
      shift = 8 * DAY;
      try {
        assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`)).body.status, 'expired');
      } finally {
        shift = 0;
      }
    });
  });

  describe('2. fees (CIP-38)', () => {
    it('a signed non-zero fee is refused with NonZeroFee', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n, feeAmount: 10n ** 12n });
      expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'NonZeroFee');
      const partial = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n, feeAmount: 1n, partiallyFillable: true });
      expectError(await submit(orderBody(partial, await signOrder(trader, partial), 'eip712', trader.address)), 400, 'NonZeroFee');
    });

    it('a zero-fee order inside the market is a limit order that may live longer than 3 h and does not count toward the cap', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n, validTo: nowSeconds() + 10 * DAY });
      const res = await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const stored = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${res.body}`);
      assert.equal(stored.body.class, 'limit');
    });
  });

  describe('3. buying native ETH', () => {
    it('quotes USDC → ETH through the wrapped native token', async () => {
      const res = await quote({ sellToken: usdc, buyToken: BUY_ETH_ADDRESS, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(3000n * 10n ** 6n) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.quote.buyToken, BUY_ETH_ADDRESS);
      assert.ok(BigInt(res.body.quote.buyAmount) > 10n ** 17n, res.body.quote.buyAmount);
      const buy = await quote({ sellToken: usdc, buyToken: BUY_ETH_ADDRESS, from: trader.address, kind: 'buy', buyAmountAfterFee: String(10n ** 17n) });
      assert.equal(buy.status, 200, JSON.stringify(buy.body));
    });

    it('refuses selling WETH for ETH with SameBuyAndSellToken (quote and order)', async () => {
      expectError(await quote({ sellToken: weth, buyToken: BUY_ETH_ADDRESS, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 17n) }), 400, 'SameBuyAndSellToken');
      const order = makeOrder({ sellToken: weth, buyToken: BUY_ETH_ADDRESS, sellAmount: 10n ** 16n, buyAmount: 1n });
      expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'SameBuyAndSellToken');
    });
  });

  describe('4. the rest of the upstream pipeline', () => {
    const testClient = () => createTestClient({ mode: 'anvil', transport: http(app.devnet!.rpcUrl) });
    const MAGIC_WORD = '1626ba7e' + '00'.repeat(28);

    async function eip1271Order(owner: Hex, sellAmount: bigint) {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount, buyAmount: 1n });
      return submit(orderBody(order, '0x1234', 'eip1271', owner));
    }

    it('isValidSignature runs under a gas cap: a wallet that says yes only with ample gas is refused', async () => {
      const wallet = privateKeyToAccount(generatePrivateKey()).address;
      // if gasleft() > 5,000,000 return the magic value, else 32 zero bytes
      const code = ('0x' + '63004c4b40' + '5a' + '11' + '600f' + '57' + '6020' + '6000' + 'f3' + '5b' + '7f' + MAGIC_WORD + '6000' + '52' + '6020' + '6000' + 'f3') as Hex;
      await testClient().setCode({ address: wallet, bytecode: code });
      expectError(await eip1271Order(wallet, 10n ** 15n + 1n), 400, 'InvalidSignature');
    });

    it('isValidSignature’s answer is ABI-decoded strictly: the magic value with dirty padding is refused', async () => {
      const wallet = privateKeyToAccount(generatePrivateKey()).address;
      const code = ('0x' + '7f' + '1626ba7e' + '01'.repeat(28) + '6000' + '52' + '6020' + '6000' + 'f3') as Hex;
      await testClient().setCode({ address: wallet, bytecode: code });
      expectError(await eip1271Order(wallet, 10n ** 15n + 2n), 400, 'InvalidSignature');
    });

    it('big numbers in quoteId, offset and limit get a 400, never a 500', async () => {
      // an id beyond what the store can hold, or negative, is refused by name; an unknown id in range is a quote
      // not found, and the order gets a fresh one (reference §7.4): accepted
      const signed = async (extra: bigint) => {
        const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n + 7n + extra, buyAmount: 1n });
        return orderBody(order, await signOrder(trader, order), 'eip712', trader.address);
      };
      for (const [i, quoteId] of [1e20, -1].entries()) {
        const res = await submit({ ...(await signed(BigInt(i))), quoteId });
        expectError(res, 400, 'InvalidParameter');
        assert.match(res.body.description, /quoteId/, JSON.stringify(res.body));
      }
      for (const [i, quoteId] of [2 ** 40, Number.MAX_SAFE_INTEGER].entries()) {
        const res = await submit({ ...(await signed(10n + BigInt(i))), quoteId });
        assert.equal(res.status, 201, `quoteId ${quoteId}: ${JSON.stringify(res.body)}`);
      }
      for (const [path, errorType] of [
        [`/devnet/api/v1/account/${trader.address}/orders?offset=1e20`, 'InvalidParameter'],
        [`/devnet/api/v1/account/${trader.address}/orders?offset=99999999999999999999`, 'InvalidParameter'],
        [`/devnet/api/v1/account/${trader.address}/orders?limit=99999999999999999999`, 'InvalidParameter'],
        [`/devnet/api/v2/trades?owner=${trader.address}&offset=99999999999999999999`, 'InvalidParameter'],
        [`/devnet/api/v1/trades?owner=${trader.address}&offset=99999999999999999999`, 'InvalidParameter'],
      ] as const) {
        expectError(await call(app.baseUrl, 'GET', path), 400, errorType);
      }
    });

    it('/api/v1/trades pages with offset and limit exactly as /api/v2/trades does', async () => {
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?owner=${trader.address}&limit=5000`), 400, 'InvalidLimit');
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?owner=${trader.address}&limit=0`), 400, 'InvalidLimit');
    });

    it('app data sent with a refused order is not stored', async () => {
      const doc = JSON.stringify({ appCode: 'refused-order', metadata: {}, version: '1.4.0', nonce: nowSeconds() });
      const hash = keccak256(toHex(doc));
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 0n, buyAmount: 1n, appData: hash });
      const res = await submit({ ...orderBody(order, await signOrder(trader, order), 'eip712', trader.address), appData: doc, appDataHash: hash });
      expectError(res, 400, 'ZeroAmount');
      assert.equal((await call(app.baseUrl, 'GET', `/devnet/api/v1/app_data/${hash}`)).status, 404);
    });

    it('expired quotes are pruned', async () => {
      const q = await quote({ sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 17n + 11n) });
      assert.equal(q.status, 200, JSON.stringify(q.body));
      const count = async (id: number) => Number((await sql<{ n: string }>`select count(*) as n from quotes where id = ${id}`.execute(app.database.db)).rows[0]!.n);
      assert.equal(await count(q.body.id), 1);
      shift = DAY;
      try {
        const later = await quote({ sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: String(10n ** 17n + 12n) });
        assert.equal(later.status, 200, JSON.stringify(later.body));
      } finally {
        shift = 0;
      }
      assert.equal(await count(q.body.id), 0, 'the quote expired a day ago and is gone');
    });
  });
});
