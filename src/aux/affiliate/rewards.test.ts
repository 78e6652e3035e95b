/**
 * Issue 19 M3 — rewards that cannot be farmed with play money: which chains count, a trade valued at the native
 * price of its block's auction, and self-trades within a code's circle left out of the volume.
 * (The liquidity floor against a real thin pool on the devnet: trade-valuation.test.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Address, Hex } from 'viem';
import { openDatabase, type Database } from '../../db/connection.js';
import { toBytes, toHex } from '../../db/codec.js';
import { countingChains } from './index.js';
import { DatabaseCodeStore } from './code-store.js';
import { ComputedAffiliateStats } from './computed-stats.js';
import { TradeValuation } from './trade-valuation.js';

const terms = { rewardAmount: 20, triggerVolume: 100, timeCapDays: 10, volumeCap: 1_000_000, revenueSplitAffiliatePct: 50, revenueSplitTraderPct: 30, revenueSplitDaoPct: 20 };
const address = (): Address => toHex(randomBytes(20)) as Address;

describe('countingChains', () => {
  const devnet = { network: { chainId: 31337, devnet: {} } };
  const mainnet = { network: { chainId: 1, devnet: null } };
  const gnosis = { network: { chainId: 100, devnet: null } };

  it('beside real chains only the real ones count (or those configured); a devnet-only node counts its devnet', () => {
    assert.deepEqual(countingChains([devnet, mainnet, gnosis], null), [mainnet, gnosis]);
    assert.deepEqual(countingChains([devnet, mainnet, gnosis], [100]), [gnosis]);
    assert.deepEqual(countingChains([devnet], null), [devnet], 'the program can be tried on a devnet-only node');
    assert.deepEqual(countingChains([devnet], [31337]), [devnet]);
  });

  it('refuses the devnet beside real chains and a chain the node does not serve', () => {
    assert.throws(() => countingChains([devnet, mainnet], [31337, 1]), /^Error: AFFILIATE_CHAINS: the devnet \(31337\) cannot count beside real chains$/);
    assert.throws(() => countingChains([mainnet], [137]), /^Error: AFFILIATE_CHAINS: chain 137 is not served by this node$/);
  });
});

describe('rewards on the database', () => {
  let database: Database;
  const CHAIN = 1;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  async function competition(auctionId: number, startBlock: number, prices: Record<string, string>): Promise<void> {
    await sql`insert into solver_competitions (chain_id, auction_id, start_block, deadline_block, auction, solutions)
      values (${CHAIN}, ${auctionId}, ${startBlock}, ${startBlock + 3}, ${JSON.stringify({ orders: [], prices })}::jsonb, '[]'::jsonb)`.execute(database.db);
  }

  describe('TradeValuation (auction price of the block)', () => {
    const token = address();
    const other = address();
    const network = { chainId: CHAIN, client: null as never, reader: null as never, amm: null, wrappedNative: null, connectors: [] };
    let usdPerNative: number | null = 2_000;
    const valuation = () => new TradeValuation({ db: database.db, network, usdPrices: { usdPriceOrNull: async () => usdPerNative }, minLiquidityUsd: 100_000 });

    before(async () => {
      // native atoms per token atom × 1e18: 0.0005 ETH per token of 18 decimals
      await competition(10, 100, { [token]: '500000000000000' });
      await competition(11, 105, { [token]: '600000000000000', [other]: '1' });
      // a trader pumps the token afterwards: a later auction's price does not apply to an earlier trade
      await competition(12, 200, { [token]: '999000000000000000000' });
    });

    it('uses the auction its settlement won, else the newest auction at or before its block', async () => {
      const tx = toHex(randomBytes(32)) as Hex;
      await database.db.insertInto('settlements').values({ chain_id: CHAIN, block_number: 106, log_index: 0, solver: randomBytes(20), tx_hash: toBytes(tx), auction_id: 10 }).execute();
      const tokens = 10n * 10n ** 18n;
      assert.equal(await valuation().usdValue(token, tokens, { blockNumber: 106, txHash: tx }), 10, 'its own auction (10): 10 tokens × 0.0005 ETH × $2000');
      assert.equal(await valuation().usdValue(token, tokens, { blockNumber: 106, txHash: null }), 12, 'the newest at or before block 106 (11): 10 × 0.0006 × 2000');
      assert.equal(await valuation().usdValue(token, tokens, { blockNumber: 104, txHash: null }), 10);
      assert.equal(await valuation().usdValue(token, tokens, { blockNumber: 99, txHash: null }), null, 'no auction before the trade');
      assert.equal(await valuation().usdValue(address(), tokens, { blockNumber: 150, txHash: null }), null, 'a token no auction priced is worth nothing');
    });

    it('rejects (retried later) when the native token has no USD price', async () => {
      usdPerNative = null;
      try {
        await assert.rejects(valuation().usdValue(token, 1n, { blockNumber: 106, txHash: null }), /^Error: no USD price of chain 1's native token$/);
      } finally {
        usdPerNative = 2_000;
      }
    });
  });

  describe('self-trades', () => {
    it('a trade paying the circle or matched against the circle in the same settlement does not count; the counting chains only', async () => {
      const { db } = database;
      const codes = new DatabaseCodeStore(db);
      const affiliate = address();
      const [t1, t2, outsider] = [address(), address(), address()];
      const since = new Date(Date.now() - 3_600_000);
      await codes.register({ code: 'CIRCLE', walletAddress: affiliate, signedMessage: '0x01', terms }, new Date(since.getTime() - 1_000));
      for (const trader of [t1, t2]) {
        await db.insertInto('affiliate_bindings').values({ trader: toBytes(trader), code: 'CIRCLE', chain_id: CHAIN, order_uid: randomBytes(56), linked_since: since }).execute();
      }
      const [dai, usdc] = [randomBytes(20), randomBytes(20)];
      let block = 500;
      async function trade(chainId: number, owner: Address, sell: Uint8Array, buy: Uint8Array, usd: number, opts: { tx?: Uint8Array; receiver?: Address } = {}) {
        const n = block++;
        const uid = randomBytes(56);
        if (opts.receiver) {
          await db.insertInto('orders').values({
            chain_id: chainId, uid, owner: toBytes(owner), created_at: new Date(), sell_token: sell, buy_token: buy, receiver: toBytes(opts.receiver),
            sell_amount: '1', buy_amount: '1', valid_to: 0, app_data: randomBytes(32), fee_amount: '0', kind: 'sell', partially_fillable: false,
            signature: randomBytes(65), signing_scheme: 'eip712', sell_token_balance: 'erc20', buy_token_balance: 'erc20', class: 'limit', settlement_contract: randomBytes(20),
          }).execute();
        }
        await db.insertInto('trades').values({
          chain_id: chainId, block_number: n, log_index: 0, order_uid: uid, owner: toBytes(owner), sell_token: sell, buy_token: buy,
          sell_amount: '1', buy_amount: '1', fee_amount: '0', tx_hash: opts.tx ?? randomBytes(32), block_timestamp: new Date(),
        }).execute();
        await db.insertInto('affiliate_trade_volumes').values({ chain_id: chainId, block_number: n, log_index: 0, trader: toBytes(owner), block_timestamp: new Date(), order_created_at: null, usd_volume: usd, priced: true }).execute();
      }
      // counts: an honest trade of t1, and t2 matched against an outsider (a real coincidence of wants)
      await trade(CHAIN, t1, dai, usdc, 100);
      const cow = randomBytes(32);
      await trade(CHAIN, t2, dai, usdc, 200, { tx: cow });
      await trade(CHAIN, outsider, usdc, dai, 200, { tx: cow });
      // does not count: t1 and t2 trading with each other in one settlement
      const wash = randomBytes(32);
      await trade(CHAIN, t1, dai, usdc, 5_000, { tx: wash });
      await trade(CHAIN, t2, usdc, dai, 5_000, { tx: wash });
      // does not count: t1's trade paying the affiliate's wallet, or t2's
      await trade(CHAIN, t1, dai, usdc, 7_000, { receiver: affiliate });
      await trade(CHAIN, t1, dai, usdc, 9_000, { receiver: t2 });
      // does not count: a chain that is not counting (the devnet beside real chains)
      await trade(31337, t1, dai, usdc, 11_000);

      const stats = new ComputedAffiliateStats(db, [CHAIN]);
      assert.equal((await stats.traderStats(t1))?.eligible_volume, 100);
      assert.equal((await stats.traderStats(t2))?.eligible_volume, 200);
      assert.equal((await stats.affiliateStats(affiliate))?.total_volume, 300);
      // the same rows, every chain and no circle rule, would have been 37 300
      const all = await db.selectFrom('affiliate_trade_volumes').select((eb) => eb.fn.sum<number>('usd_volume').as('s')).where('trader', 'in', [toBytes(t1), toBytes(t2)]).executeTakeFirstOrThrow();
      assert.equal(Number(all.s), 37_300);
    });
  });
});
