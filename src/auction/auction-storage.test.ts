/**
 * The auction's storage on both engines: settlement submissions hold their orders in flight until resolved or
 * indexed; order events are written once per transition; auction ids strictly increase.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { engines } from '../../test/fixtures/databases.js';
import type { Database } from '../db/connection.js';
import { toBytes, toHex } from '../db/codec.js';
import { AuctionStore } from './auction-store.js';
import { OrderLifecycle } from './order-lifecycle.js';
import { SettlementSubmissions } from '../solver/settlement-submissions.js';

const CHAIN = 31337;
const SOLVER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc' as Address;
const uid = (): Hex => toHex(randomBytes(56));
const hash = (): Hex => toHex(randomBytes(32));

for (const engine of await engines()) {
  describe(`auction storage on ${engine.engine}`, { skip: engine.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    before(async () => {
      database = await engine.open();
    });
    after(async () => {
      await database?.dispose();
    });

    async function insertOrder(order: Hex, validTo: number): Promise<void> {
      await database.db
        .insertInto('orders')
        .values({
          chain_id: CHAIN, uid: toBytes(order), owner: toBytes(`0x${order.slice(66, 106)}`), sell_token: randomBytes(20), buy_token: randomBytes(20), receiver: null,
          sell_amount: '100', buy_amount: '100', valid_to: validTo, app_data: Buffer.alloc(32), fee_amount: '0', kind: 'sell', partially_fillable: false,
          signature: randomBytes(65), signing_scheme: 'eip712', sell_token_balance: 'erc20', buy_token_balance: 'erc20', class: 'limit', settlement_contract: randomBytes(20),
        })
        .execute();
    }
    async function insertTrade(order: Hex, tx: Hex, block: number, sell = '100'): Promise<void> {
      await database.db
        .insertInto('trades')
        .values({ chain_id: CHAIN, block_number: block, log_index: 0, order_uid: toBytes(order), owner: randomBytes(20), sell_token: randomBytes(20), buy_token: randomBytes(20), sell_amount: sell, buy_amount: '100', fee_amount: '0', tx_hash: toBytes(tx) })
        .execute();
    }
    const labels = async (order: Hex) =>
      (await database.db.selectFrom('order_events').select(['label', 'reason']).where('order_uid', '=', toBytes(order)).orderBy('id').execute()).map((e) => (e.reason ? `${e.label}:${e.reason}` : e.label));

    it('records a transaction only under the current leadership epoch (the fence against a leader that lost its lock unawares)', { skip: engine.engine === 'pglite' ? 'one process owns PGlite: no leadership to fence' : false }, async () => {
      const { db } = database;
      const name = `test-fence-${randomBytes(4).toString('hex')}`;
      await db.insertInto('leadership_epochs' as never).values({ name, epoch: 2 } as never).execute();
      const stale = new SettlementSubmissions(db, 99_999, { name, epoch: 1n }); // a chain of its own: the other tests see nothing of it
      const current = new SettlementSubmissions(db, 99_999, { name, epoch: 2n });
      const attempt = (txHash: Hex) => ({ txHash, nonce: 7, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, sentBlock: 10 });
      await stale.begin(900, SOLVER, [uid()], { createdBlock: 10 });
      assert.equal(await stale.recordAttempt(900, SOLVER, attempt(hash()), true), false, 'the superseded leader may not send');
      assert.equal((await stale.get(900, SOLVER))!.txHash, null);
      const sent = hash();
      assert.equal(await current.recordAttempt(900, SOLVER, attempt(sent), true), true, 'the current leader may');
      assert.equal((await current.get(900, SOLVER))!.txHash, sent);
    });

    it('holds the orders of pending and of mined-but-unindexed submissions in flight, and releases reverted ones', async () => {
      const submissions = new SettlementSubmissions(database.db, CHAIN);
      const [a, b, c] = [uid(), uid(), uid()];
      await submissions.begin(1, SOLVER, [a, b]);
      assert.deepEqual([...(await submissions.inFlightOrderUids(100))].sort(), [a, b].sort());
      const tx1 = hash();
      await submissions.sent(1, SOLVER, tx1);
      await submissions.resolve(1, SOLVER, 'reverted', { blockNumber: 101, reason: 'GPv2: order filled' });
      assert.equal((await submissions.inFlightOrderUids(101)).size, 0, 'a reverted submission releases its orders');

      await submissions.begin(2, SOLVER, [c]);
      const tx2 = hash();
      await submissions.sent(2, SOLVER, tx2);
      await submissions.resolve(2, SOLVER, 'mined', { blockNumber: 102 });
      assert.deepEqual([...(await submissions.inFlightOrderUids(102))], [c], 'mined but not indexed yet: still in flight');
      assert.equal((await submissions.inFlightOrderUids(102 + 65)).size, 0, 'never indexed (a reorg): released after a while');
      await insertTrade(c, tx2, 102);
      await database.db.insertInto('settlements').values({ chain_id: CHAIN, block_number: 102, log_index: 1, solver: toBytes(SOLVER), tx_hash: toBytes(tx2), auction_id: null }).execute();
      assert.equal((await submissions.inFlightOrderUids(102)).size, 0, 'its trades are indexed: no longer in flight');
      assert.equal(await submissions.markIndexed(), 1);
      assert.equal(await submissions.markIndexed(), 0);
      const row = await database.db.selectFrom('competition_settlements').select('status').where('auction_id', '=', 2).executeTakeFirstOrThrow();
      assert.equal(row.status, 'settled');
      const settlement = await database.db.selectFrom('settlements').select('auction_id').where('tx_hash', '=', toBytes(tx2)).executeTakeFirstOrThrow();
      assert.equal(Number(settlement.auction_id), 2, 'the indexed settlement learns its auction');

      await submissions.begin(3, SOLVER, [a]);
      assert.deepEqual((await submissions.unresolved()).map((s) => [s.auctionId, s.txHash, s.orderUids]), [[3, null, [a]]]);
    });

    it('keeps an unsent submission of another process in flight until its deadline, and never sends one given up on', async () => {
      const submissions = new SettlementSubmissions(database.db, CHAIN);
      const [a, b] = [uid(), uid()];
      await submissions.failUnsent(0, 0); // a submission of the test above, recorded without its block (as before migration 008)
      // the old leader recorded a submission at block 500 and is about to send it
      await submissions.begin(10, SOLVER, [a], { createdBlock: 500 });
      assert.equal(await submissions.failUnsent(503, 5), 0, 'the new leader does not release it within the deadline');
      assert.deepEqual([...(await submissions.inFlightOrderUids(503))], [a]);
      const attempt = { txHash: hash(), nonce: 7, maxFeePerGas: 3n, maxPriorityFeePerGas: 1n, sentBlock: 503 };
      assert.equal(await submissions.recordAttempt(10, SOLVER, attempt, true), true, 'the old leader records its transaction before broadcasting it');
      assert.equal(await submissions.failUnsent(600, 5), 0, 'a sent submission is never failed as unsent');
      const replacement = { ...attempt, txHash: hash(), maxFeePerGas: 4n, sentBlock: 510 };
      assert.equal(await submissions.recordAttempt(10, SOLVER, replacement, false), true);
      assert.equal(await submissions.recordAttempt(10, SOLVER, { ...replacement, txHash: hash(), nonce: 8 }, false), false, 'a replacement keeps the nonce');
      const tracked = (await submissions.unresolved()).find((x) => x.auctionId === 10)!;
      assert.deepEqual([tracked.nonce, tracked.txHashes, tracked.txHash, tracked.maxFeePerGas, tracked.sentBlock], [7, [attempt.txHash, replacement.txHash], replacement.txHash, 4n, 510]);

      // an unsent one past its deadline fails, and its sender may no longer send it
      await submissions.begin(11, SOLVER, [b], { createdBlock: 500 });
      assert.equal(await submissions.failUnsent(506, 5), 1);
      assert.equal(await submissions.recordAttempt(11, SOLVER, { ...attempt, txHash: hash() }, true), false);
      assert.equal((await submissions.inFlightOrderUids(506)).has(b), false);
      // resolving twice: the first outcome stays
      assert.equal(await submissions.resolve(10, SOLVER, 'mined', { blockNumber: 511, txHash: attempt.txHash }), true);
      assert.equal(await submissions.resolve(10, SOLVER, 'dropped', { reason: 'late' }), false);
      const row = await submissions.get(10, SOLVER);
      assert.deepEqual([row?.status, row?.txHash], ['mined', attempt.txHash], 'the transaction that landed is the one recorded');
    });

    it('writes each order event once per transition', async () => {
      const lifecycle = new OrderLifecycle(database.db, CHAIN);
      const now = 2_000_000_000;
      const [a, b] = [uid(), uid()];
      await insertOrder(a, now + 100);
      await insertOrder(b, now - 10);
      await database.db.insertInto('order_events').values({ chain_id: CHAIN, order_uid: toBytes(a), label: 'created', reason: null }).execute();
      assert.equal(await lifecycle.afterAuction([a], [{ uid: b, label: 'invalid', reason: 'insufficient_balance' }]), 2);
      assert.equal(await lifecycle.afterAuction([a], [{ uid: b, label: 'invalid', reason: 'insufficient_balance' }]), 0, 'nothing changed');
      assert.equal(await lifecycle.afterAuction([a], [{ uid: b, label: 'filtered', reason: 'missing_native_price' }]), 1, 'a new reason is a transition');
      // a fresh process reads the latest events back instead of writing them again
      assert.equal(await new OrderLifecycle(database.db, CHAIN).afterAuction([a], [{ uid: b, label: 'filtered', reason: 'missing_native_price' }]), 0);
      assert.equal(await lifecycle.afterCompetition([a], [a, b]), 2, 'executing wins over considered for the same order');
      assert.deepEqual(await labels(b), ['invalid:insufficient_balance', 'filtered:missing_native_price', 'considered']);

      const tx = hash();
      await insertTrade(a, tx, 200, '40');
      await insertTrade(a, tx, 201, '20'); // same transaction hash twice is one settlement
      assert.equal(await lifecycle.afterIndexed([a, uid()]), 1);
      assert.equal(await lifecycle.afterIndexed([a]), 0, 'one traded event per settlement transaction');
      await insertTrade(a, hash(), 202, '40');
      assert.equal(await lifecycle.afterIndexed([a]), 1);
      assert.deepEqual(await labels(a), ['created', 'ready', 'executing', 'traded', 'traded']);

      await database.db.insertInto('invalidations').values({ chain_id: CHAIN, block_number: 203, log_index: 0, order_uid: toBytes(b), owner: randomBytes(20), tx_hash: randomBytes(32) }).execute();
      assert.equal(await lifecycle.afterIndexed([b]), 1);
      assert.equal(await lifecycle.afterIndexed([b]), 0);

      // expiry: only unfilled, uncancelled orders past validTo, once
      const c = uid();
      await insertOrder(c, now - 5);
      assert.equal(await lifecycle.expire(now), 1, 'c expired; a is filled, b cancelled on chain');
      assert.equal(await lifecycle.expire(now + 10), 0);
      assert.deepEqual(await labels(c), ['expired']);
    });

    it('gives auctions strictly increasing ids and keeps only the current one', async () => {
      const store = new AuctionStore(database.db, CHAIN);
      const base = { chainId: CHAIN, timestamp: 1, orders: [], prices: new Map(), settlement: SOLVER };
      const [x, y] = await Promise.all([store.save({ ...base, block: 10 }), store.save({ ...base, block: 10 })]);
      const z = await store.save({ ...base, block: 11 });
      assert.notEqual(x.id, y.id);
      assert.ok(z.id > Math.max(x.id, y.id));
      const current = await store.current();
      assert.equal(current?.id, z.id);
      assert.equal(current?.block, 11);
      const rows = await database.db.selectFrom('auctions').select('id').where('chain_id', '=', CHAIN).execute();
      assert.deepEqual(rows.map((r) => Number(r.id)), [z.id]);
    });
  });
}
