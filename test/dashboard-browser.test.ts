/**
 * The dashboard in a real browser (issue 13): playwright-core driving Debian's Chromium against a whole node
 * with auctions on (the real devnet, PGlite, HTTP on a real port). One session through every view with no
 * console error, no failed request and no 4xx/5xx answer from start to end.
 *
 * Without /usr/bin/chromium the suite is skipped with one line, except under CI=true where it is required.
 * DASHBOARD_SCREENSHOT_DIR=docs saves the screenshots of the README there (with an hour of market history).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ETHFLOW_ABI, ethFlowOrderUid, orderDomain, type EthFlowOrderData } from '../src/protocol/index.js';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';
import { waitFor } from './fixtures/wait-for.js';

/** The page's document, as the predicates below use it (they run in the browser; the project has no DOM types). */
interface PageElement { textContent: string | null }
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): Iterable<PageElement> & { length: number } };

const CHROMIUM = '/usr/bin/chromium';
const screenshotDir = process.env.DASHBOARD_SCREENSHOT_DIR ?? null;
const skip = !existsSync(CHROMIUM) && process.env.CI !== 'true' ? `no Chromium at ${CHROMIUM} (apt-get install chromium); the dashboard browser test is skipped` : false;
if (skip) console.log(`# ${skip}`);

describe('the dashboard in Chromium', { skip }, () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true', ...(screenshotDir ? { DEVNET_HISTORY_HOURS: '1', DEVNET_BLOCK_TIME: '2' } : {}) });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      // an EventSource closed by navigation is aborted by the browser, not failed by the server
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
  });

  const text = async (testid: string) => (await page.getByTestId(testid).first().textContent())?.trim() ?? '';
  const shoot = async (name: string) => {
    if (!screenshotDir) return;
    mkdirSync(screenshotDir, { recursive: true });
    await page.screenshot({ path: join(screenshotDir, `dashboard-${name}.png`) });
  };

  it('renders the essentials on the server for readers without JavaScript', async () => {
    const res = await fetch(`${app.baseUrl}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    const noscript = /<noscript>([\s\S]*)<\/noscript>/.exec(html)?.[1] ?? '';
    assert.ok(noscript.includes(app.devnet!.rpcUrl), 'the devnet RPC URL without JavaScript');
    assert.match(noscript, /chain id 31337/);
    for (const token of app.devnet!.describe().tokens) assert.ok(noscript.includes(token.address), `token ${token.symbol} listed`);
    assert.equal((await fetch(`${app.baseUrl}/favicon.ico`)).status, 200);
  });

  it('shows the devnet facts and a current auction whose id increases', async () => {
    await page.goto(`${app.baseUrl}/`);
    await page.getByTestId('chain-id').waitFor();
    assert.equal(await text('chain-id'), '31337');
    assert.equal(await text('rpc-url'), app.devnet!.rpcUrl);
    const trader = app.devnet!.describe().accounts[0]!.address;
    assert.ok(await page.locator(`[data-testid=devnet-facts] a[href="#/address/${trader.toLowerCase()}"]`).count(), 'demo accounts link to their address view');
    await page.getByTestId('auction-id').waitFor({ timeout: 30_000 });
    const first = Number(await text('auction-id'));
    assert.ok(first >= 1);
    await page.waitForFunction((before) => Number(document.querySelector('[data-testid=auction-id]')?.textContent) > before, first, { timeout: 30_000 });
    assert.ok(Number(await text('auction-id')) > first);
  });

  it('"Trade a CoW" ends with two fulfilled orders, the winning solver and the settlement transaction on the page', async () => {
    await page.getByTestId('trade-a-cow').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=cow-order]').length === 2, null, { timeout: 30_000 });
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid=cow-order] [data-testid=status]')].filter((e) => e.textContent === 'fulfilled').length === 2,
      null,
      { timeout: 60_000 },
    );
    await page.waitForFunction(() => /^[a-z-]+$/.test(document.querySelector('[data-testid=cow-solver]')?.textContent ?? ''), null, { timeout: 30_000 });
    const tx = await text('cow-tx');
    assert.match(tx, /^0x[0-9a-f]{64}$/);
    const uid = await page.locator('[data-testid=cow-order] a[href^="#/order/"]').first().getAttribute('title');
    const trades = await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`);
    assert.equal(trades.body[0].txHash, tx, 'the settlement of the order');
    const competition = await call(app.baseUrl, 'GET', `/devnet/api/v1/solver_competition/by_tx_hash/${tx}`);
    const winner = competition.body.solutions.find((s: { isWinner: boolean }) => s.isWinner).solver;
    assert.equal(await text('cow-solver'), winner);
    // each trade's surplus over its limit price (sell orders: in the buy token)
    const latest = (await call(app.baseUrl, 'GET', '/dashboard/api/devnet/trades?limit=2')).body as Array<{ orderUid: string; buyAmount: string; sellAmount: string; surplus: string; surplusToken: string; buyToken: string }>;
    assert.equal(latest.length, 2);
    for (const t of latest) {
      const order = (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${t.orderUid}`)).body;
      const expected = BigInt(t.buyAmount) - (BigInt(t.sellAmount) * BigInt(order.buyAmount)) / BigInt(order.sellAmount);
      assert.ok(expected > 0n, 'the CoW beats both limit prices');
      assert.deepEqual([t.surplus, t.surplusToken], [expected.toString(), t.buyToken]);
    }
    await shoot('exchange');
  });

  it('shows an order’s lifecycle and trades', async () => {
    await page.locator('[data-testid=cow-order] a[href^="#/order/"]').first().click();
    await page.waitForFunction(() => document.querySelector('[data-testid=lifecycle]')?.textContent?.includes('traded'), null, { timeout: 30_000 });
    assert.match((await page.getByTestId('order').textContent()) ?? '', /fulfilled/);
    assert.match((await page.getByTestId('order-trades').textContent()) ?? '', /WETH/);
    await shoot('order');
  });

  it('streams a demo account’s balance live: a faucet mint shows up without reloading', async () => {
    const trader = app.devnet!.describe().accounts[0]!.address.toLowerCase();
    await page.goto(`${app.baseUrl}/#/address/${trader}`);
    const cell = page.locator('[data-testid=balance-COW] [data-testid=balance]');
    await cell.waitFor({ timeout: 30_000 });
    const before = Number((await cell.textContent())!.replace(/,/g, ''));
    const mint = await call(app.baseUrl, 'POST', '/devnet/faucet', { address: trader, token: 'COW', amount: '1234' });
    assert.equal(mint.status, 200);
    await page.waitForFunction(
      (expected) => Number(document.querySelector('[data-testid=balance-COW] [data-testid=balance]')?.textContent?.replace(/,/g, '')) === expected,
      before + 1234,
      { timeout: 30_000 },
    );
    assert.match((await page.getByTestId('address-orders').textContent()) ?? '', /fulfilled/, 'the account’s orders');
    await shoot('address');
  });

  it('shows the market: USD prices, pools, price history', async () => {
    await page.goto(`${app.baseUrl}/#/market`);
    await page.getByTestId('usd-prices').locator('tr', { hasText: 'WETH' }).waitFor({ timeout: 30_000 });
    assert.match((await page.getByTestId('usd-prices').textContent()) ?? '', /USDC\s*\$1/);
    await page.getByTestId('pools').locator('tr', { hasText: 'USDC/WETH' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('charts').locator('strong').first().waitFor({ timeout: 30_000 });
    if (screenshotDir) await page.locator('.chart canvas').first().waitFor({ timeout: 30_000 });
    await shoot('market');
  });

  it('shows an eth-flow order under its sender (not the contract): the order’s owner and the sender’s orders', async () => {
    const d = app.devnet!.describe();
    const sender = privateKeyToAccount(d.accounts.find((a) => a.role === 'trader')!.privateKey);
    const ethFlow = d.contracts.ethFlow.toLowerCase() as Address;
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address;
    const client = createPublicClient({ transport: http(app.devnet!.rpcUrl) });
    const now = Number((await client.getBlock()).timestamp);
    // far from the market: it stays open
    const order: EthFlowOrderData = {
      buyToken: token('USDC'), receiver: sender.address, sellAmount: 10n ** 16n, buyAmount: 10n ** 30n, appData: `0x${'00'.repeat(32)}`,
      feeAmount: 0n, validTo: now + 3600, partiallyFillable: false, quoteId: 0n,
    };
    const wallet = createWalletClient({ account: sender, transport: http(app.devnet!.rpcUrl) });
    const chain = { id: 31337, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [app.devnet!.rpcUrl] } } } as const;
    const hash = await wallet.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value: order.sellAmount, chain, account: sender });
    assert.equal((await client.waitForTransactionReceipt({ hash, pollingInterval: 200 })).status, 'success');
    const uid = ethFlowOrderUid(order, { ethFlow, wrappedNative: token('WETH'), domain: orderDomain(31337) }) as Hex;
    const user = sender.address.toLowerCase();
    // indexed first: the page asks for it once (a 404 before would be an error answer)
    await waitFor('the eth-flow order indexed', async () => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).status === 200, 60_000);

    await page.goto(`${app.baseUrl}/#/order/${uid}`);
    await page.locator(`[data-testid=order] dd a[href="#/address/${user}"]`).first().waitFor({ timeout: 60_000 });
    // the owner shown first is the sender; the contract only as the one it went through
    const ownerLinks = await page.locator('[data-testid=order] dd').nth(1).locator('a').evaluateAll((as) => as.map((a) => (a as unknown as { getAttribute(n: string): string }).getAttribute('href')));
    assert.deepEqual(ownerLinks, [`#/address/${user}`, `#/address/${ethFlow}`]);

    await page.goto(`${app.baseUrl}/#/address/${user}`);
    const row = page.locator('[data-testid=address-orders] tr', { has: page.locator(`a[href="#/order/${uid}"]`) });
    await row.waitFor({ timeout: 30_000 });
    assert.equal(await row.locator(`a[href="#/address/${user}"]`).count(), 1, 'the row names the sender');
    assert.equal(await row.locator(`a[href="#/address/${ethFlow}"]`).count(), 0, 'not the contract');
  });

  it('had no console error, failed request or error answer in the whole session', () => {
    assert.deepEqual(problems, []);
  });
});
