/**
 * The affiliate program's storage on both engines: uniqueness of code and wallet under concurrency, the sync's
 * bindings (the first valid order to trade wins; only orders their owner authorised, found by their trades) and trade values (fixed once, removed with a reorged trade), and the computed
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
      const sync = new AffiliateSync({ db, chains: [{ chainId: CHAIN, usdValue: async (_t, atoms) => (pricings++, Number(atoms)) }] });
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

    describe('bindings follow only orders their owner authorised, found by their trades', () => {
      const CHAIN2 = 100;
      const base = Date.now() - 600_000;
      const doc = (c: string) => JSON.stringify({ metadata: { referrer: { code: c } } });
      async function order(owner: Address, code: string, at: number, scheme: 'eip712' | 'presign' = 'eip712'): Promise<Hex> {
        const uid = toHex(randomBytes(56));
        const hash = keccak256(viemHex(doc(code)));
        await database.db.insertInto('app_data').values({ contract_app_data: toBytes(hash), full_app_data: Buffer.from(doc(code)) }).onConflict((oc) => oc.doNothing()).execute();
        await database.db
          .insertInto('orders')
          .values({
            chain_id: CHAIN2, uid: toBytes(uid), owner: toBytes(owner), created_at: new Date(at), sell_token: randomBytes(20), buy_token: randomBytes(20), receiver: null,
            sell_amount: '1', buy_amount: '1', valid_to: 0, app_data: toBytes(hash), fee_amount: '0', kind: 'sell', partially_fillable: false,
            signature: scheme === 'presign' ? toBytes(owner) : randomBytes(65), signing_scheme: scheme, sell_token_balance: 'erc20', buy_token_balance: 'erc20', class: 'limit', settlement_contract: randomBytes(20),
          })
          .execute();
        return uid;
      }
      async function trade(block: number, uid: Hex, owner: Address, token: Uint8Array = randomBytes(20)): Promise<void> {
        await database.db.insertInto('trades').values({
          chain_id: CHAIN2, block_number: block, log_index: 0, order_uid: toBytes(uid), owner: toBytes(owner), sell_token: token, buy_token: randomBytes(20),
          sell_amount: '100', buy_amount: '1', fee_amount: '0', tx_hash: randomBytes(32), block_timestamp: new Date(base + block * 1000),
        }).execute();
      }
      async function checkpoint(block: number): Promise<void> {
        const { db } = database;
        await db.insertInto('indexer_checkpoints').values({ chain_id: CHAIN2, name: 'main', block_number: block, block_hash: randomBytes(32) })
          .onConflict((oc) => oc.columns(['chain_id', 'name']).doUpdateSet({ block_number: block })).execute();
        await db.insertInto('indexed_blocks').values({ chain_id: CHAIN2, number: block, hash: randomBytes(32), parent_hash: randomBytes(32), timestamp: Math.floor((base + block * 1000) / 1000) }).execute();
      }
      const boundCode = async (trader: Address) =>
        (await database.db.selectFrom('affiliate_bindings').select('code').where('trader', '=', toBytes(trader)).executeTakeFirst())?.code ?? null;

      it('an unsigned presign order posted in a victim\'s name binds nobody; the victim\'s own signed referred order binds the victim once it trades', async () => {
        const attacker = address();
        const honest = address();
        const victim = address();
        await codes.register({ code: 'EVIL-CODE', walletAddress: attacker, signedMessage: '0x01', terms }, new Date(base));
        await codes.register({ code: 'GOOD-CODE', walletAddress: honest, signedMessage: '0x01', terms }, new Date(base));
        const sync = new AffiliateSync({ db: database.db, chains: [{ chainId: CHAIN2, usdValue: async () => 1 }] });
        // the attack: anyone may post a presign order with any owner; it never trades (the victim never presigns it)
        await order(victim, 'EVIL-CODE', base + 1_000, 'presign');
        await checkpoint(20);
        await sync.runOnce();
        assert.equal(await boundCode(victim), null, 'not bound by an order the victim never authorised');
        // the victim's own signed order, referred by GOOD, trades
        const own = await order(victim, 'GOOD-CODE', base + 2_000);
        await trade(21, own, victim);
        await checkpoint(21);
        assert.equal((await sync.runOnce()).bound, 1);
        assert.equal(await boundCode(victim), 'GOOD-CODE');
      });

      it('a presign order binds once its owner presigned it on chain (it traded)', async () => {
        const affiliate = address();
        const trader = address();
        await codes.register({ code: 'PRESIGNED', walletAddress: affiliate, signedMessage: '0x01', terms }, new Date(base));
        const uid = await order(trader, 'PRESIGNED', base + 3_000, 'presign');
        await trade(22, uid, trader);
        await checkpoint(22);
        await new AffiliateSync({ db: database.db, chains: [{ chainId: CHAIN2, usdValue: async () => 1 }] }).runOnce();
        assert.equal(await boundCode(trader), 'PRESIGNED');
      });

      it('does not skip an order whose row committed late (an older creation time than orders already looked at)', async () => {
        const affiliate = address();
        const trader = address();
        await codes.register({ code: 'LATE-CODE', walletAddress: affiliate, signedMessage: '0x01', terms }, new Date(base - 60_000));
        const sync = new AffiliateSync({ db: database.db, chains: [{ chainId: CHAIN2, usdValue: async () => 1 }] });
        await sync.runOnce(); // the sync has looked at everything so far
        // an order created (its transaction started) long before, committed only now, and its trade indexed after
        const uid = await order(trader, 'LATE-CODE', base - 30_000);
        await trade(23, uid, trader);
        await checkpoint(23);
        await sync.runOnce();
        assert.equal(await boundCode(trader), 'LATE-CODE');
      });

      it('one token whose price keeps failing does not hold up the valuation of the chain\'s other trades', async () => {
        const { db } = database;
        const bad = randomBytes(20);
        const trader = address();
        await trade(30, toHex(randomBytes(56)), trader, bad);
        await trade(31, toHex(randomBytes(56)), trader);
        await checkpoint(31);
        const usdValue = async (token: Address) => {
          if (token === toHex(bad)) throw new Error('price provider: 500');
          return 7;
        };
        const sync = new AffiliateSync({ db, chains: [{ chainId: CHAIN2, usdValue }] });
        await sync.runOnce();
        const values = async () =>
          (await db.selectFrom('affiliate_trade_volumes').select(['block_number', 'usd_volume', 'priced']).where('chain_id', '=', CHAIN2).where('block_number', '>=', 30).orderBy('block_number').execute())
            .map((r) => [Number(r.block_number), Number(r.usd_volume), r.priced]);
        assert.deepEqual(await values(), [[31, 7, true]], 'the other trade is valued');
        const progress = await db.selectFrom('affiliate_progress').select('block_number').where('name', '=', `chain:${CHAIN2}`).executeTakeFirstOrThrow();
        assert.equal(Number(progress.block_number), 29, 'covered up to the trade still waiting');
        // once it has failed for giveUpMs, the trade is stored unpriced and coverage moves on
        const givingUp = new AffiliateSync({ db, chains: [{ chainId: CHAIN2, usdValue }], giveUpMs: 0 });
        await givingUp.runOnce();
        assert.deepEqual(await values(), [[30, 0, false], [31, 7, true]]);
        const after = await db.selectFrom('affiliate_progress').select('block_number').where('name', '=', `chain:${CHAIN2}`).executeTakeFirstOrThrow();
        assert.equal(Number(after.block_number), 31);
      });
    });
  });
}
