/**
 * The affiliate program's storage on both engines: uniqueness of code and wallet under concurrency, the sync's
 * bindings (first valid order wins) and trade values (fixed once, removed with a reorged trade), and the computed
 * statistics over them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { keccak256, toHex as viemHex, type Address, type Hex } from 'viem';
import { engines } from '../../../test/fixtures/databases.js';
import type { Database } from '../../db/connection.js';
import { toBytes, toHex } from '../../db/codec.js';
import { AffiliateSync } from './affiliate-sync.js';
import { DatabaseCodeStore } from './code-store.js';
import { ComputedAffiliateStats } from './computed-stats.js';

const CHAIN = 31337;
const terms = { rewardAmount: 20, triggerVolume: 100, timeCapDays: 10, volumeCap: 1000, revenueSplitAffiliatePct: 50, revenueSplitTraderPct: 30, revenueSplitDaoPct: 20 };
const address = (): Address => toHex(randomBytes(20)) as Address;

for (const engine of await engines()) {
  describe(`affiliate storage on ${engine.engine}`, { skip: engine.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    let codes: DatabaseCodeStore;
    before(async () => {
      database = await engine.open();
      codes = new DatabaseCodeStore(database.db);
    });
    after(async () => {
      await database?.dispose();
    });

    it('20 concurrent registrations of one code: one wins, nineteen are told the code is taken; a second code for a wallet is refused', async () => {
      const wallets = Array.from({ length: 20 }, address);
      const outcomes = await Promise.all(wallets.map((w) => codes.register({ code: 'RACE1', walletAddress: w, signedMessage: '0x01', terms })));
      assert.equal(outcomes.filter((o) => o.ok).length, 1);
      assert.deepEqual(outcomes.filter((o) => !o.ok).map((o) => (o as { conflict: string }).conflict), Array(19).fill('code'));
      const winner = wallets[outcomes.findIndex((o) => o.ok)]!;
      assert.deepEqual(await codes.register({ code: 'OTHER1', walletAddress: winner, signedMessage: '0x01', terms }), { ok: false, conflict: 'wallet' });
      const stored = await codes.byCode('RACE1');
      assert.equal(stored?.walletAddress, winner);
      assert.equal(stored?.volumeCap, 1000);
    });

    it('binds by the first valid order, values trades once, drops the value of a reorged trade, and computes the statistics', async () => {
      const { db } = database;
      const affiliate = address();
      const trader = address();
      const base = Date.now() - 60_000;
      await codes.register({ code: 'BIND-ME', walletAddress: affiliate, signedMessage: '0x01', terms }, new Date(base));
      const doc = (c: string) => JSON.stringify({ metadata: { referrer: { code: c } } });
      const orders: Array<{ uid: Hex; owner: Address; at: number; doc: string }> = [
        { uid: toHex(randomBytes(56)), owner: trader, at: base + 1_000, doc: doc('nobody') },
        { uid: toHex(randomBytes(56)), owner: affiliate, at: base + 2_000, doc: doc('bind-me') },
        { uid: toHex(randomBytes(56)), owner: trader, at: base + 3_000, doc: doc('bind-me') },
        { uid: toHex(randomBytes(56)), owner: trader, at: base + 4_000, doc: doc('bind-me') },
      ];
      for (const o of orders) {
        const hash = keccak256(viemHex(o.doc));
        await db.insertInto('app_data').values({ contract_app_data: toBytes(hash), full_app_data: Buffer.from(o.doc) }).onConflict((oc) => oc.doNothing()).execute();
        await db
          .insertInto('orders')
          .values({
            chain_id: CHAIN, uid: toBytes(o.uid), owner: toBytes(o.owner), created_at: new Date(o.at), sell_token: randomBytes(20), buy_token: randomBytes(20), receiver: null,
            sell_amount: '1', buy_amount: '1', valid_to: 0, app_data: toBytes(hash), fee_amount: '0', kind: 'sell', partially_fillable: false,
            signature: randomBytes(65), signing_scheme: 'eip712', sell_token_balance: 'erc20', buy_token_balance: 'erc20', class: 'limit', settlement_contract: randomBytes(20),
          })
          .execute();
      }
      const trade = (block: number, uid: Hex, atoms: bigint, at: number) =>
        db.insertInto('trades').values({
          chain_id: CHAIN, block_number: block, log_index: 0, order_uid: toBytes(uid), owner: toBytes(trader), sell_token: randomBytes(20), buy_token: randomBytes(20),
          sell_amount: atoms.toString(), buy_amount: '1', fee_amount: '0', tx_hash: randomBytes(32), block_timestamp: new Date(at),
        }).execute();
      // the first order's trade comes before the binding and does not count; block times are whole seconds and may
      // precede the binding order's creation: its own trade still counts
      await trade(10, orders[0]!.uid, 500n, base + 1_500);
      await trade(11, orders[2]!.uid, 300n, base + 2_000);
      await trade(12, orders[3]!.uid, 150n, base + 5_000);
      await db.insertInto('indexer_checkpoints').values({ chain_id: CHAIN, name: 'main', block_number: 12, block_hash: randomBytes(32) }).execute();
      await db.insertInto('indexed_blocks').values({ chain_id: CHAIN, number: 12, hash: randomBytes(32), parent_hash: randomBytes(32), timestamp: Math.floor((base + 5_000) / 1000) }).execute();

      let pricings = 0;
      const sync = new AffiliateSync({ db, chains: [{ chainId: CHAIN, usdValue: async (_t, atoms) => (pricings++, Number(atoms)) }], settleMs: 0 });
      assert.deepEqual(await sync.runOnce(), { bound: 1, valued: 3 });
      assert.deepEqual(await sync.runOnce(), { bound: 0, valued: 0 }, 'idempotent');
      assert.equal(pricings, 3);
      const binding = await db.selectFrom('affiliate_bindings').selectAll().where('trader', '=', toBytes(trader)).executeTakeFirstOrThrow();
      assert.equal(binding.code, 'BIND-ME');
      assert.equal(toHex(binding.order_uid), orders[2]!.uid);
      assert.equal(await db.selectFrom('affiliate_bindings').select('trader').where('trader', '=', toBytes(affiliate)).executeTakeFirst(), undefined, 'no self-referral');

      const stats = new ComputedAffiliateStats(db);
      const t = await stats.traderStats(trader);
      assert.deepEqual([t?.eligible_volume, t?.total_earned, t?.left_to_next_rewards, t?.lastUpdatedAt], [450, 4 * 20 * 0.3, 50, new Date(Math.floor((base + 5_000) / 1000) * 1000).toISOString()]);
      const a = await stats.affiliateStats(affiliate);
      assert.deepEqual([a?.total_volume, a?.total_earned, a?.total_traders, a?.active_traders], [450, 4 * 20 * 0.5, 1, 1]);

      // a reorg removes block 12: its value goes with it
      await db.deleteFrom('trades').where('chain_id', '=', CHAIN).where('block_number', '>', 11).execute();
      assert.equal((await stats.traderStats(trader))?.eligible_volume, 300);
    });
  });
}
