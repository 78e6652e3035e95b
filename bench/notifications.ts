/**
 * Notifications (issue 11), two figures:
 * 1. production: notifications produced per second from 10 000 indexed trades (10 000 orders, one fill each, on
 *    PGlite), the producer stepping from block 0 to the head (fills, price improvement, messages, one insert with
 *    the outbox rows per step) ÷ a bare SELECT of the same trades joined with their orders.
 * 2. delivery: webhook deliveries per second through the outbox dispatcher (claim with SKIP LOCKED, the real
 *    webhook channel signing each body, outcome recorded) to a local receiver ÷ a bare POST loop of the same
 *    bodies to the same receiver with the same concurrency; in paired rounds (bare then outbox, then the other way
 *    round, after a warm-up), the figure the median of the rounds' ratios, so a load swing moves both sides.
 */
import { createServer } from 'node:http';
import { request } from 'node:http';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { NotificationProducer } from '../src/aux/notifications/notification-producer.js';
import { insertNotifications } from '../src/aux/notifications/notification-store.js';
import { insertSubscription } from '../src/aux/notifications/subscription-store.js';
import { WebhookChannel, generateWebhookSecret } from '../src/notify/channels/webhook-channel.js';
import { OutboxDispatcher } from '../src/notify/outbox/outbox-dispatcher.js';
import type { Figure } from './figure.js';

const TRADES = 10_000;
const DELIVERIES = 1_000;
const CONCURRENCY = 8;
const ROUNDS = 5;

async function benchProduction(): Promise<Figure> {
  const database = await openDatabase({ kind: 'pglite', dataDir: null });
  try {
    await migrateToLatest(database.db);
    const db = database.db;
    const hex = (expr: string, bytes: number) => `decode(lpad(to_hex(${expr}), ${bytes * 2}, '0'), 'hex')`;
    await sql.raw(`insert into orders (chain_id, uid, owner, sell_token, buy_token, sell_amount, buy_amount, valid_to, app_data, fee_amount, kind, partially_fillable, signature, signing_scheme, class, settlement_contract)
      select 1, ${hex('g', 56)}, ${hex('g % 500 + 1', 20)}, ${hex('1', 20)}, ${hex('2', 20)}, 1000000000000000000, 3000000000, 4000000000, ${hex('0', 32)}, 0, 'sell', false, '\\x00', 'eip712', 'limit', ${hex('9', 20)}
      from generate_series(1, ${TRADES}) g`).execute(db);
    await sql.raw(`insert into trades (chain_id, block_number, log_index, order_uid, owner, sell_token, buy_token, sell_amount, buy_amount, fee_amount, tx_hash, block_timestamp)
      select 1, g / 10 + 1, g % 10, ${hex('g', 56)}, ${hex('g % 500 + 1', 20)}, ${hex('1', 20)}, ${hex('2', 20)}, 1000000000000000000, 3000000000 + g, 0, ${hex('g / 10 + 1', 32)}, now()
      from generate_series(1, ${TRADES}) g`).execute(db);
    const head = TRADES / 10 + 1;
    await sql.raw(`insert into indexer_checkpoints (chain_id, name, block_number, block_hash) values (1, 'main', ${head}, ${hex('77', 32)})`).execute(db);

    const t0 = performance.now();
    const { rows } = await sql`select t.*, o.sell_amount as os, o.buy_amount as ob, o.kind from trades t join orders o on o.chain_id = t.chain_id and o.uid = t.order_uid where t.chain_id = 1 order by t.block_number, t.log_index`.execute(db);
    const selectMs = performance.now() - t0;

    const producer = new NotificationProducer({
      db,
      chain: { chainId: 1, name: 'mainnet' },
      tokens: async (tokens) => tokens.map((_, i) => (i % 2 === 0 ? { symbol: 'WETH', decimals: 18 } : { symbol: 'USDC', decimals: 6 })),
      head: async () => head,
      block: async (n) => ({ hash: `0x${n.toString(16).padStart(64, '0')}`, timestamp: 1_700_000_000 + n * 12 }),
      confirmations: 0,
      priceImprovementBps: 1,
      maxBlocks: 5000,
    });
    const t1 = performance.now();
    let produced = 0;
    for (;;) {
      const step = await producer.step();
      produced += step.produced;
      if (!step.behind) break;
    }
    const produceMs = performance.now() - t1;
    const perSecond = (produced / produceMs) * 1000;
    const selectPerSecond = (rows.length / selectMs) * 1000;
    return {
      name: 'notifications produced from indexed trades',
      value: perSecond,
      unit: 'notifications/s',
      baseline: selectPerSecond,
      baselineUnit: 'trade rows/s (bare SELECT of the same trades with their orders)',
      ratio: perSecond / selectPerSecond,
      note: `${produced} notifications (fills + price improvements) from ${TRADES} trades in ${produceMs.toFixed(0)} ms, PGlite in memory`,
    };
  } finally {
    await database.close();
  }
}

async function benchDelivery(): Promise<Figure> {
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  const database = await openDatabase({ kind: 'pglite', dataDir: null });
  try {
    await migrateToLatest(database.db);
    const account = `0x${'ab'.repeat(20)}` as const;
    await insertSubscription(database.db, { id: 'sub_bench', account, channel: 'webhook', target: `http://127.0.0.1:${port}/hook`, types: null, secret: generateWebhookSecret() });
    const notesOf = (round: number) => Array.from({ length: DELIVERIES }, (_, i) => ({
      id: `bench-${round}-${i}`, chainId: 1, account, type: 'order_filled' as const, message: `Sold 0.1 WETH for 299.12 USDC on mainnet (${i})`,
      timestamp: new Date(), metadata: { orderId: `0x${i.toString(16)}`, chainId: 1, executedAmount: '100000000000000000' },
    }));
    const sample = notesOf(0)[0]!;
    const body = JSON.stringify({ ...sample, timestamp: sample.timestamp.toISOString() });

    // baseline: bare POSTs of a notification body, CONCURRENCY in flight
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const post = () => new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/hook', method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
    const bare = async (): Promise<number> => {
      const t0 = performance.now();
      let sent = 0;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (sent < DELIVERIES) {
          sent++;
          await post();
        }
      }));
      return performance.now() - t0;
    };
    const channels = new Map([['webhook', new WebhookChannel({ allowPrivateTargets: true })]] as const);
    let delivered = 0;
    const outbox = async (round: number): Promise<number> => {
      await database.db.transaction().execute((trx) => insertNotifications(trx, notesOf(round)));
      const dispatcher = new OutboxDispatcher({
        db: database.db, channels, policy: { baseMs: 100, capMs: 1000, maxAgeMs: 3_600_000 }, leaseMs: 30_000, pollIntervalMs: 50, concurrency: CONCURRENCY,
      });
      // the dispatcher as it runs in the node: independent workers, woken as slots free
      const abort = new AbortController();
      const t1 = performance.now();
      const running = dispatcher.run(abort.signal);
      while (dispatcher.counts.delivered + dispatcher.counts.dead + dispatcher.counts.retry < DELIVERIES) await new Promise((r) => setTimeout(r, 1));
      const ms = performance.now() - t1;
      abort.abort();
      await running;
      delivered += dispatcher.counts.delivered;
      return ms;
    };
    // paired rounds (bare then outbox, then the other way round): the figure is the median of the rounds' ratios
    await bare(); // warm-up: connections and code
    received = 0;
    const ratios: number[] = [];
    const bareMs: number[] = [];
    const outboxMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let b: number;
      let o: number;
      if (round % 2 === 0) {
        b = await bare();
        o = await outbox(round);
      } else {
        o = await outbox(round);
        b = await bare();
      }
      bareMs.push(b);
      outboxMs.push(o);
      ratios.push(b / o);
    }
    agent.destroy();
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const perSecond = (DELIVERIES / median(outboxMs)) * 1000;
    const barePerSecond = (DELIVERIES / median(bareMs)) * 1000;
    return {
      name: 'webhook deliveries through the outbox',
      value: perSecond,
      unit: 'deliveries/s',
      baseline: barePerSecond,
      baselineUnit: 'bare POSTs/s to the same receiver',
      ratio: median(ratios),
      note: `median of ${ROUNDS} paired rounds of ${DELIVERIES} (round ratios ${ratios.map((r) => r.toFixed(2)).join(', ')}); ${delivered} of ${ROUNDS * DELIVERIES} delivered (receiver saw ${received - ROUNDS * DELIVERIES} beyond the bare POSTs), concurrency ${CONCURRENCY}, PGlite in memory`,
    };
  } finally {
    await database.close();
    receiver.close();
  }
}

export async function benchNotifications(): Promise<Figure[]> {
  return [await benchProduction(), await benchDelivery()];
}
