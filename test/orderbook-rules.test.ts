/**
 * Order-book rules that the error-row tests do not reach: who may cancel, all-or-nothing batch cancellation,
 * the signing domain's chain, partial allowances, zero amounts, app-data consistency with the order, and
 * replacement of orders that cannot be replaced. Real HTTP against a real node on the devnet.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, nowSeconds, orderBody, signOrder, uidOf } from './fixtures/orders.js';
import { appDataHash, orderCancellationsTypedData, orderDomain, orderTypedData } from '../src/protocol/index.js';

const ERC20 = parseAbi(['function approve(address, uint256) returns (bool)']);

describe('order-book rules', () => {
  let app: TestApp;
  let trader: PrivateKeyAccount;
  let other: PrivateKeyAccount;
  let weth: Hex;
  let usdc: Hex;
  let clock = 0;
  const now = () => nowSeconds() + clock;
  const submit = (body: unknown) => call(app.baseUrl, 'POST', '/devnet/api/v1/orders', body);
  const statusOf = async (uid: string) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body.status;
  const expectError = (res: { status: number; body: any }, status: number, errorType: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.errorType, errorType, JSON.stringify(res.body));
    assert.equal(typeof res.body.description, 'string');
  };
  // every placed order differs (two identical orders within a second would share a UID)
  let placed = 0n;
  async function place(account: PrivateKeyAccount, patch: Parameters<typeof makeOrder>[0] extends infer P ? Partial<P> : never = {}): Promise<Hex> {
    placed += 1n;
    const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n + placed, validTo: now() + 600, ...patch });
    const res = await submit(orderBody(order, await signOrder(account, order), 'eip712', account.address));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Hex;
  }
  async function signCancellations(account: PrivateKeyAccount, uids: Hex[]) {
    const typed = orderCancellationsTypedData(uids, orderDomain(31337));
    return { signature: await account.signTypedData(typed as never), signingScheme: 'eip712' };
  }

  before(async () => {
    app = await startTestApp({}, { now });
    const d = app.devnet!.describe();
    trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    other = privateKeyToAccount(d.accounts[1]!.privateKey);
    weth = d.tokens.find((t) => t.symbol === 'WETH')!.address.toLowerCase() as Hex;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
  });
  after(async () => {
    await app?.stop();
  });

  describe('cancellation', () => {
    it('401 WrongOwner when someone else signs the cancellation; the order stays open', async () => {
      const uid = await place(trader);
      const res = await call(app.baseUrl, 'DELETE', `/devnet/api/v1/orders/${uid}`, await signCancellations(other, [uid]));
      expectError(res, 401, 'WrongOwner');
      assert.equal(await statusOf(uid), 'open');
      const own = await call(app.baseUrl, 'DELETE', `/devnet/api/v1/orders/${uid}`, await signCancellations(trader, [uid]));
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.equal(await statusOf(uid), 'cancelled');
    });

    it('a batch is all or nothing: one unknown UID or one foreign order cancels none', async () => {
      const mine = await place(trader);
      const theirs = await place(other);
      const unknown = `0x${'ab'.repeat(56)}` as Hex;
      const withUnknown = await call(app.baseUrl, 'DELETE', '/devnet/api/v1/orders', { orderUids: [mine, unknown], ...(await signCancellations(trader, [mine, unknown])) });
      expectError(withUnknown, 404, 'OrderNotFound');
      assert.equal(await statusOf(mine), 'open', 'nothing cancelled');
      const withForeign = await call(app.baseUrl, 'DELETE', '/devnet/api/v1/orders', { orderUids: [mine, theirs], ...(await signCancellations(trader, [mine, theirs])) });
      expectError(withForeign, 401, 'WrongOwner');
      assert.equal(await statusOf(mine), 'open', 'nothing cancelled');
      assert.equal(await statusOf(theirs), 'open');
    });
  });

  describe('submission', () => {
    it('InvalidSignature for an order signed in another chain\'s domain', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n, validTo: now() + 600 });
      const mainnetSignature = await trader.signTypedData(orderTypedData(order, orderDomain(1)) as never);
      expectError(await submit(orderBody(order, mainnetSignature, 'eip712', trader.address)), 400, 'InvalidSignature');
    });

    it('InsufficientAllowance when a non-zero allowance is one unit short', async () => {
      const owner = privateKeyToAccount(generatePrivateKey());
      await app.devnet!.faucet({ address: owner.address, token: 'WETH', amount: '1' }).then((r) => r.waitForReceipt());
      await app.devnet!.faucet({ address: owner.address, token: 'ETH', amount: '1' }).then((r) => r.waitForReceipt());
      const sellAmount = 10n ** 16n;
      const wallet = createWalletClient({ account: owner, transport: http(app.devnet!.rpcUrl) });
      const hash = await wallet.sendTransaction({
        chain: null,
        to: weth,
        data: encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [app.devnet!.deployment.contracts.vaultRelayer, sellAmount - 1n] }),
      });
      await app.networks[0]!.client.waitForTransactionReceipt({ hash });
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount, validTo: now() + 600 });
      expectError(await submit(orderBody(order, await signOrder(owner, order), 'eip712', owner.address)), 400, 'InsufficientAllowance');
    });

    it('ZeroAmount for a zero sell or buy amount', async () => {
      for (const patch of [{ sellAmount: 0n }, { buyAmount: 0n }]) {
        const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n, validTo: now() + 600, ...patch });
        expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'ZeroAmount');
      }
    });

    it('AppDataHashMismatch when the document does not hash to the signed appData', async () => {
      const doc = JSON.stringify({ appCode: 'rules-test' });
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n, validTo: now() + 600, appData: appDataHash(doc) });
      const body = { ...orderBody(order, await signOrder(trader, order), 'eip712', trader.address), appData: JSON.stringify({ appCode: 'another' }), appDataHash: appDataHash(doc) };
      expectError(await submit(body), 400, 'AppDataHashMismatch');
    });

    it('AppdataFromMismatch when app-data metadata.signer is not the order\'s from', async () => {
      const doc = JSON.stringify({ appCode: 'rules-test', metadata: { signer: other.address } });
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 15n, validTo: now() + 600, appData: appDataHash(doc) });
      const res = await submit({ ...orderBody(order, await signOrder(trader, order), 'eip712', trader.address), appData: doc });
      expectError(res, 400, 'AppdataFromMismatch');
    });
  });

  describe('replacement of an order that cannot be replaced', () => {
    /** the replacing order's uid and app-data hash, for checking what was (not) stored */
    let last: { uid: Hex; appData: Hex } | undefined;
    async function replace(uid: Hex) {
      const doc = JSON.stringify({ appCode: 'rules-test', metadata: { replacedOrder: { uid } } });
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 2n * 10n ** 15n, validTo: now() + 600, appData: appDataHash(doc) });
      last = { uid: uidOf(order, trader.address), appData: appDataHash(doc) };
      return submit({ ...orderBody(order, await signOrder(trader, order), 'eip712', trader.address), appData: doc });
    }

    it('a missing order: 404 OrderNotFound, nothing stored', async () => {
      expectError(await replace(`0x${'cd'.repeat(56)}` as Hex), 404, 'OrderNotFound');
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${last!.uid}`), 404, 'NotFound');
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v1/app_data/${last!.appData}`), 404, 'NotFound');
    });

    it('a cancelled order: AlreadyCancelled', async () => {
      const uid = await place(trader);
      assert.equal((await call(app.baseUrl, 'DELETE', `/devnet/api/v1/orders/${uid}`, await signCancellations(trader, [uid]))).status, 200);
      expectError(await replace(uid), 400, 'AlreadyCancelled');
    });

    it('an expired order: OrderExpired, and the expired order stays expired', async () => {
      const uid = await place(trader, { validTo: now() + 120 });
      clock += 600;
      try {
        expectError(await replace(uid), 400, 'OrderExpired');
        assert.equal(await statusOf(uid), 'expired');
      } finally {
        clock -= 600;
      }
    });
  });
});
