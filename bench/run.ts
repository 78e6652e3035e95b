/**
 * `npm run bench`: every figure is a ratio against a baseline measured in the same run on the same machine,
 * printed as a table and written to bench/results.json. No figure is asserted anywhere.
 */
import { writeFileSync } from 'node:fs';
import { benchWebhookChannel } from './webhook-channel.js';
import { benchOrderSignature } from './order-signature.js';
import { benchOrderBook } from './orderbook.js';
import { benchUsdPrice } from './usd-price.js';
import { benchBalanceStream } from './balance-stream.js';
import { benchAuctionBuild } from './auction-build.js';
import { benchDashboard } from './dashboard.js';
import { benchNotifications } from './notifications.js';
import { benchAffiliateStats } from './affiliate-stats.js';
import { benchSimulation } from './simulation.js';
import { benchFulfilment } from './fulfilment.js';
import { benchSolverEngines } from './solver-engines.js';
import { benchKitStart } from './kit-start.js';
import { benchIndexer } from './indexer.js';
import { benchEthFlow } from './ethflow.js';
import { benchForkStart } from './fork-start.js';
import type { Figure } from './figure.js';

const benches: Array<[string, () => Promise<Figure | Figure[]>]> = [
  ['webhook-channel', benchWebhookChannel],
  ['order-signature', benchOrderSignature],
  ['orderbook', benchOrderBook],
  ['usd-price', benchUsdPrice],
  ['balance-stream', benchBalanceStream],
  ['auction-build', benchAuctionBuild],
  ['dashboard', benchDashboard],
  ['notifications', benchNotifications],
  ['affiliate-stats', benchAffiliateStats],
  ['simulation', benchSimulation],
  ['fulfilment', benchFulfilment],
  ['solver-engines', benchSolverEngines],
  ['kit-start', benchKitStart],
  ['indexer', benchIndexer],
  ['ethflow', benchEthFlow],
  ['fork-start', benchForkStart],
];

async function main() {
  const only = process.argv.slice(2);
  const figures: Figure[] = [];
  for (const [name, run] of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    process.stdout.write(`running ${name} ...\n`);
    const result = await run();
    for (const f of Array.isArray(result) ? result : [result]) {
      figures.push(f);
      process.stdout.write(`  ${f.name}: ${fmt(f.value)} ${f.unit}  vs baseline ${fmt(f.baseline)} ${f.baselineUnit}  → ratio ${f.ratio.toFixed(3)}${f.note ? `  (${f.note})` : ''}\n`);
    }
  }
  const out = { date: new Date().toISOString(), node: process.version, figures };
  writeFileSync(new URL('./results.json', import.meta.url), JSON.stringify(out, null, 2));
  process.stdout.write(`wrote bench/results.json (${figures.length} figures)\n`);
}

function fmt(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2);
}

void main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
