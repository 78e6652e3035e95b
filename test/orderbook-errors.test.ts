/**
 * Every order-book error row of spec §7, provoked through real HTTP against the real devnet and asserted by
 * status and errorType. Plus the framework-level failures (malformed JSON, body too large, unknown route).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, nowSeconds, orderBody, signOrder } from './fixtures/orders.js';
import { waitFor } from './fixtures/wait-for.js';

const banned = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const DENIED_DAI = '0x78e6B135B2A7f63b281C80e2ff639Eed32E2a81b';

describe('order-book errors (spec §7)', () => {
  let app: TestApp;
  let trader: ReturnType<typeof privateKeyToAccount>;
  let weth: Hex;
  let usdc: Hex;
  const quote = (body: Record<string, unknown>) => call(app.baseUrl, 'POST', '/devnet/api/v1/quote', body);
  const submit = (body: unknown) => call(app.baseUrl, 'POST', '/devnet/api/v1/orders', body);
  const expectError = (res: { status: number; body: any }, status: number, errorType: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.errorType, errorType, JSON.stringify(res.body));
    assert.equal(typeof res.body.description, 'string');
  };

  before(async () => {
    app = await startTestApp({ BANNED_ADDRESSES: banned.address, DENIED_TOKENS: DENIED_DAI });
    const d = app.devnet!.describe();
    // the devnet deploys deterministically: DAI's address is known before the node (and its configuration) starts
    assert.equal(d.tokens.find((t) => t.symbol === 'DAI')!.address, DENIED_DAI, 'the devnet DAI moved: update DENIED_DAI');
    trader = privateKeyToAccount(d.accounts[0]!.privateKey);
    weth = d.tokens.find((t) => t.symbol === 'WETH')!.address.toLowerCase() as Hex;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
    // the stranger holds WETH but never approved the vault relayer; the banned account holds WETH too
    for (const who of [stranger.address, banned.address]) {
      const r = await app.devnet!.faucet({ address: who, token: 'WETH', amount: '1' });
      await r.waitForReceipt();
    }
  });
  after(async () => {
    await app?.stop();
  });

  const baseQuote = () => ({ sellToken: weth, buyToken: usdc, from: trader.address, kind: 'sell', sellAmountBeforeFee: '1000000000000000000' });

  describe('quote', () => {
    it('SellAmountDoesNotCoverFee (with the fee amount)', async () => {
      const res = await quote({ ...baseQuote(), sellAmountBeforeFee: '1' });
      expectError(res, 400, 'SellAmountDoesNotCoverFee');
      assert.match(res.body.data.fee_amount, /^[1-9][0-9]*$/);
    });
    it('NoLiquidity: buying more than the pools hold', async () => {
      const res = await quote({ sellToken: weth, buyToken: usdc, from: trader.address, kind: 'buy', buyAmountAfterFee: (10n ** 30n).toString() });
      expectError(res, 400, 'NoLiquidity');
    });
    it('UnsupportedToken: not a contract, not an ERC-20, deny-listed', async () => {
      expectError(await quote({ ...baseQuote(), buyToken: '0x000000000000000000000000000000000000dead' }), 400, 'UnsupportedToken');
      expectError(await quote({ ...baseQuote(), buyToken: app.devnet!.deployment.contracts.settlement }), 400, 'UnsupportedToken');
      // a real ERC-20 with pools, refused only because DENIED_TOKENS names it
      const denied = await quote({ ...baseQuote(), buyToken: DENIED_DAI });
      expectError(denied, 400, 'UnsupportedToken');
      assert.match(denied.body.description, /deny listed/);
      const served = await quote(baseQuote());
      assert.equal(served.status, 200, `the same quote for a token not on the list is served: ${JSON.stringify(served.body)}`);
    });
    for (const [what, patch, field] of [
      ['missing from', { from: undefined }, 'from'],
      ['bad address', { buyToken: '0x1234' }, 'buyToken'],
      ['numeric amount', { sellAmountBeforeFee: 1000 }, 'sellAmountBeforeFee'],
      ['decimal point', { sellAmountBeforeFee: '1.5' }, 'sellAmountBeforeFee'],
      ['kind not sell/buy', { kind: 'swap' }, 'kind'],
    ] as const) {
      it(`InvalidParameter naming the field: ${what}`, async () => {
        const res = await quote({ ...baseQuote(), ...patch });
        expectError(res, 400, 'InvalidParameter');
        assert.match(res.body.description, new RegExp(field));
      });
    }
    it('SameBuyAndSellToken, InsufficientValidTo, ExcessiveValidTo', async () => {
      expectError(await quote({ ...baseQuote(), buyToken: weth }), 400, 'SameBuyAndSellToken');
      expectError(await quote({ ...baseQuote(), validTo: nowSeconds() + 10 }), 400, 'InsufficientValidTo');
      expectError(await quote({ ...baseQuote(), validTo: nowSeconds() + 30 * 86400 }), 400, 'ExcessiveValidTo');
    });
    it('Forbidden for a deny-listed trader', async () => {
      expectError(await quote({ ...baseQuote(), from: banned.address }), 403, 'Forbidden');
    });
  });

  describe('submission', () => {
    const market = () => makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 16n, buyAmount: 1n });

    it('InvalidSignature: signed by another key than from, and a garbage signature', async () => {
      const order = market();
      const sig = await signOrder(stranger, order);
      expectError(await submit(orderBody(order, sig, 'eip712', trader.address)), 400, 'InvalidSignature');
      expectError(await submit(orderBody(order, ('0x' + '11'.repeat(64) + '05') as Hex, 'eip712', trader.address)), 400, 'InvalidSignature');
      // signed as eip712 but declared ethsign: recovers someone else
      const sig712 = await signOrder(trader, order);
      expectError(await submit(orderBody(order, sig712, 'ethsign', trader.address)), 400, 'InvalidSignature');
    });
    it('DuplicateOrder', async () => {
      const order = market();
      const body = orderBody(order, await signOrder(trader, order), 'eip712', trader.address);
      assert.equal((await submit(body)).status, 201);
      expectError(await submit(body), 400, 'DuplicateOrder');
    });
    it('InsufficientBalance: sellAmount + feeAmount above the balance', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, sellAmount: 10n ** 30n, buyAmount: 1n });
      expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'InsufficientBalance');
    });
    it('InsufficientAllowance: funded but the vault relayer is not approved', async () => {
      const order = market();
      expectError(await submit(orderBody(order, await signOrder(stranger, order), 'eip712', stranger.address)), 400, 'InsufficientAllowance');
    });
    it('OrderExpired: validTo in the past (seconds, not milliseconds)', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, validTo: nowSeconds() - 10 });
      expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'OrderExpired');
    });
    it('SellAmountOverflow / BuyAmountOverflow: amounts above uint256', async () => {
      const body = orderBody(market(), ('0x' + '11'.repeat(65)) as Hex, 'eip712', trader.address);
      expectError(await submit({ ...body, sellAmount: (2n ** 256n).toString() }), 400, 'SellAmountOverflow');
      expectError(await submit({ ...body, buyAmount: '9'.repeat(100) }), 400, 'BuyAmountOverflow');
    });
    it('InvalidAppData: a hash with no uploaded document, and a malformed document', async () => {
      const order = makeOrder({ sellToken: weth, buyToken: usdc, appData: ('0x' + 'ab'.repeat(32)) as Hex });
      expectError(await submit(orderBody(order, await signOrder(trader, order), 'eip712', trader.address)), 400, 'InvalidAppData');
      const body = orderBody(market(), ('0x' + '11'.repeat(65)) as Hex, 'eip712', trader.address);
      expectError(await submit({ ...body, appData: '{not json' }), 400, 'InvalidAppData');
    });
    it('Forbidden: a deny-listed owner (not retryable)', async () => {
      const order = market();
      expectError(await submit(orderBody(order, await signOrder(banned, order), 'eip712', banned.address)), 403, 'Forbidden');
    });
    it('InvalidParameter for malformed bodies, naming the field', async () => {
      const body = orderBody(market(), ('0x' + '11'.repeat(65)) as Hex, 'eip712', trader.address);
      const missing = { ...body } as Record<string, unknown>;
      delete missing.buyAmount;
      const res = await submit(missing);
      expectError(res, 400, 'InvalidParameter');
      assert.match(res.body.description, /buyAmount/);
      expectError(await submit({ ...body, validTo: 'soon' }), 400, 'InvalidParameter');
      expectError(await submit('{"sellToken": '), 400, 'InvalidParameter');
    });
  });

  describe('framework failures stay in the envelope', () => {
    it('413 PayloadTooLarge over 16 KiB, 404 NotFound for an unknown route, JSON content type everywhere', async () => {
      const big = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', { padding: 'x'.repeat(20_000) });
      expectError(big, 413, 'PayloadTooLarge');
      const unknown = await call(app.baseUrl, 'GET', '/devnet/api/v1/nope');
      expectError(unknown, 404, 'NotFound');
      assert.match(unknown.headers.get('content-type') ?? '', /application\/json/);
      const missingOrder = await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/0x${'00'.repeat(56)}`);
      expectError(missingOrder, 404, 'NotFound');
      const badUid = await call(app.baseUrl, 'GET', '/devnet/api/v1/orders/0x1234');
      expectError(badUid, 400, 'InvalidParameter');
      const auxUnknown = await call(app.baseUrl, 'GET', '/31337/nothing-here');
      assert.equal(auxUnknown.status, 404);
      assert.equal(typeof auxUnknown.body.message, 'string');
    });
    it('pagination and filter errors use the upstream names', async () => {
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v1/account/${trader.address}/orders?limit=0`), 400, 'LIMIT_OUT_OF_BOUNDS');
      expectError(await call(app.baseUrl, 'GET', `/devnet/api/v2/trades?owner=${trader.address}&limit=5000`), 400, 'InvalidLimit');
      expectError(await call(app.baseUrl, 'GET', '/devnet/api/v1/trades'), 400, 'InvalidTradeFilter');
    });
  });

  // last: stopping the chain makes every chain read fail
  it('500 InternalServerError when the chain is unreachable, with an empty description', async () => {
    await app.devnet!.stop();
    // until the block feed's next poll fails, a quote may still be priced from the last block's reserves
    const res = await waitFor('a quote that needs the chain', async () => {
      const r = await quote(baseQuote());
      return r.status === 200 ? null : r;
    });
    expectError(res, 500, 'InternalServerError');
  });
});

describe('rate limits (spec §8)', () => {
  let app: TestApp;
  before(async () => {
    // limits of 1 per second: 8 concurrent requests can all pass only if they spread over 8 windows, so the
    // assertion holds however slowly a loaded machine serves them
    app = await startTestApp({ RATE_LIMIT_QUOTE: '1', RATE_LIMIT_ORDERS: '1' });
  });
  after(async () => {
    await app?.stop();
  });

  it('429 RateLimited with Retry-After on quotes and on submissions', async () => {
    const d = app.devnet!.describe();
    const body = { sellToken: d.tokens[0]!.address, buyToken: d.tokens[1]!.address, from: d.accounts[0]!.address, kind: 'sell', sellAmountBeforeFee: '1000000000000000000' };
    const quotes = await Promise.all(Array.from({ length: 8 }, () => call(app.baseUrl, 'POST', '/devnet/api/v1/quote', body)));
    const limited = quotes.filter((r) => r.status === 429);
    assert.ok(limited.length >= 1, `expected some of 8 concurrent quotes over a 1/s limit to be refused, got ${limited.length}`);
    assert.ok(quotes.some((r) => r.status === 200), 'the first quote in a window is served');
    assert.equal(limited[0]!.body.errorType, 'RateLimited');
    assert.match(limited[0]!.headers.get('retry-after') ?? '', /^\d+$/);
    const orders = await Promise.all(Array.from({ length: 6 }, () => call(app.baseUrl, 'POST', '/devnet/api/v1/orders', {})));
    assert.ok(orders.some((r) => r.status === 429 && r.body.errorType === 'RateLimited'));
  });
});
