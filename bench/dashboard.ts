/**
 * Dashboard page load (issue 13): in Debian's Chromium (playwright-core), a fresh browser context (empty cache)
 * opens `/` and waits until the current batch auction's id is shown; the figure is the time from navigation
 * start and the bytes transferred (headers + bodies of every response) until then. Baseline: the same for the API
 * explorer at `/docs` until its first operation is shown. Rounds alternate the two pages; figures are medians.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { startTestApp } from '../test/fixtures/app.js';
import type { Figure } from './figure.js';

const CHROMIUM = '/usr/bin/chromium';
const ROUNDS = 5;

interface Load {
  ms: number;
  bytes: number;
}

async function measure(browser: Browser, url: string, shown: string): Promise<Load> {
  const context = await browser.newContext();
  const page = await context.newPage();
  let bytes = 0;
  let counting = true;
  const pending: Promise<void>[] = [];
  page.on('requestfinished', (request) => {
    if (!counting) return;
    pending.push(request.sizes().then((s) => void (bytes += s.responseHeadersSize + s.responseBodySize), () => {}));
  });
  const started = Date.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator(shown).first().waitFor({ timeout: 60_000 });
  const ms = Date.now() - started;
  counting = false;
  await Promise.all(pending);
  await context.close();
  return { ms, bytes };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchDashboard(): Promise<Figure[]> {
  if (!existsSync(CHROMIUM)) throw new Error(`the dashboard bench needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const app = await startTestApp({ AUCTIONS: 'true' });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const dashboard: Load[] = [];
    const docs: Load[] = [];
    await measure(browser, `${app.baseUrl}/`, '[data-testid=auction-id]'); // warm-up (the server's first answers)
    await measure(browser, `${app.baseUrl}/docs`, '.opblock');
    for (let round = 0; round < ROUNDS; round++) {
      dashboard.push(await measure(browser, `${app.baseUrl}/`, '[data-testid=auction-id]'));
      docs.push(await measure(browser, `${app.baseUrl}/docs`, '.opblock'));
    }
    const [dMs, xMs] = [median(dashboard.map((l) => l.ms)), median(docs.map((l) => l.ms))];
    const [dBytes, xBytes] = [median(dashboard.map((l) => l.bytes)), median(docs.map((l) => l.bytes))];
    return [
      { name: 'dashboard: load to first auction shown', value: dMs, unit: 'ms', baseline: xMs, baselineUnit: 'ms (/docs to first operation)', ratio: dMs / xMs, note: `median of ${ROUNDS}, cold cache` },
      { name: 'dashboard: bytes transferred until then', value: dBytes, unit: 'bytes', baseline: xBytes, baselineUnit: 'bytes (/docs)', ratio: dBytes / xBytes },
    ];
  } finally {
    await browser.close();
    await app.stop();
  }
}
