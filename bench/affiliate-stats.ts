/**
 * Affiliate statistics (issue 10): `affiliate-stats` of an affiliate with 100 referred traders and 10,000 referred
 * trades (bindings, each trade's fixed USD volume, the time-cap window, payouts, computed per trader) against a
 * plain indexed SELECT of those trades (their key, owner, amount and time; trades joined to the affiliate's
 * bindings through the owner index), same
 * run, same PGlite. Runs alternate; the figures are medians.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Address } from 'viem';
import { openDatabase } from '../src/db/connection.js';
import { toBytes, toHex } from '../src/db/codec.js';
import { DatabaseCodeStore } from '../src/aux/affiliate/code-store.js';
import { ComputedAffiliateStats } from '../src/aux/affiliate/computed-stats.js';
import type { Figure } from './figure.js';

const TRADES = 10_000;
const TRADERS = 100;
const RUNS = 9;
const CHAIN = 31337;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function benchAffiliateStats(): Promise<Figure> {
  const database = await openDatabase({ kind: 'pglite', dataDir: null });
  try {
    const { db } = database;
    const affiliate = toHex(randomBytes(20)) as Address;
    const start = Date.now() - 20 * 86_400_000;
    await new DatabaseCodeStore(db).register(
      { code: 'BENCH', walletAddress: affiliate, signedMessage: '0x01', terms: { rewardAmount: 20, triggerVolume: 1000, timeCapDays: 90, volumeCap: 1e6, revenueSplitAffiliatePct: 50, revenueSplitTraderPct: 50, revenueSplitDaoPct: 0 } },
      new Date(start - 1000),
    );
    const traders = Array.from({ length: TRADERS }, () => randomBytes(20));
    await db.insertInto('affiliate_bindings').values(traders.map((t) => ({ trader: t, code: 'BENCH', chain_id: CHAIN, order_uid: randomBytes(56), linked_since: new Date(start) }))).execute();
    for (let offset = 0; offset < TRADES; offset += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => {
        const n = offset + i;
        return { block: n + 1, owner: traders[n % TRADERS]!, at: new Date(start + 1000 + n * 100_000) };
      });
      await db.insertInto('trades').values(rows.map((r) => ({
        chain_id: CHAIN, block_number: r.block, log_index: 0, order_uid: randomBytes(56), owner: r.owner, sell_token: randomBytes(20), buy_token: randomBytes(20),
        sell_amount: '1000000000000000000', buy_amount: '1', fee_amount: '0', tx_hash: randomBytes(32), block_timestamp: r.at,
      }))).execute();
      await db.insertInto('affiliate_trade_volumes').values(rows.map((r) => ({
        chain_id: CHAIN, block_number: r.block, log_index: 0, trader: r.owner, block_timestamp: r.at, order_created_at: r.at, usd_volume: 100 + (r.block % 50), priced: true,
      }))).execute();
    }
    await db.insertInto('affiliate_progress').values({ name: `chain:${CHAIN}`, block_number: TRADES, block_timestamp: new Date() }).execute();
    await sql`analyze`.execute(db);

    const stats = new ComputedAffiliateStats(db);
    const plain = () =>
      sql`select t.block_number, t.log_index, t.owner, t.sell_amount, t.block_timestamp from affiliate_bindings b join trades t on t.chain_id = ${CHAIN} and t.owner = b.trader where b.code = ${'BENCH'}`.execute(db);
    const check = await stats.affiliateStats(affiliate);
    if (check?.total_traders !== TRADERS) throw new Error('bench set-up: unexpected statistics');
    if ((await plain()).rows.length !== TRADES) throw new Error('bench set-up: unexpected trade count');

    const computed: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      await stats.affiliateStats(affiliate);
      computed.push(performance.now() - t);
      t = performance.now();
      await plain();
      baseline.push(performance.now() - t);
    }
    const value = median(computed);
    const base = median(baseline);
    return {
      name: 'affiliate-stats (10 000 referred trades)', value, unit: 'ms', baseline: base, baselineUnit: 'ms (plain indexed SELECT of the trades)', ratio: value / base,
      note: `${TRADERS} traders, PGlite, median of ${RUNS}`,
    };
  } finally {
    await database.close();
  }
}
