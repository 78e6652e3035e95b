/**
 * The notification producer on the real devnet: a node settling auctions (startTestApp with AUCTIONS=true), orders
 * placed through its API, and a producer stepped by the test. Every type from chain truth: a partial fill, the
 * insufficient balance that follows it (once), the fill completing it, price improvement, expiry, API and
 * on-chain cancellation; and idempotent re-production.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { call, makeOrder, orderBody } from '../../../test/fixtures/orders.js';
import { startTestApp, type TestApp } from '../../../test/fixtures/app.js';
import { E18, ERC20, trading, waitFor, type Trading } from '../../../test/fixtures/trading.js';
import { toBytes } from '../../db/codec.js';
import { producerFor } from './chain-producer.js';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../db/connection.js';
import { NotificationProducer } from './notification-producer.js';
import { listNotifications } from './notification-store.js';

describe('notification producer (real devnet)', () => {
  let app: TestApp;
  let t: Trading;
  let producer: NotificationProducer;
  const clock = () => Math.floor(Date.now() / 1000);

  const ofOrder = async (uid: Hex) => {
    await producer.step();
    return app.database.db.selectFrom('notifications').select(['id', 'type', 'message', 'metadata', 'account']).where('metadata', '@>', JSON.stringify({ orderId: uid }) as never).orderBy('created_at').orderBy('type').execute();
  };
  const typesOf = async (uid: Hex) => (await ofOrder(uid)).map((n) => n.type);
  const eventsOf = async (uid: Hex) =>
    (await app.database.db.selectFrom('order_events').select(['label', 'reason']).where('order_uid', '=', toBytes(uid)).orderBy('id').execute()).map((e) => (e.reason ? `${e.label}:${e.reason}` : e.label));

  before(async () => {
    // the node's own producers are off: only the producer this test steps writes notifications and the checkpoint
    app = await startTestApp({ AUCTIONS: 'true', NOTIFY_CONFIRMATIONS: '0' }, { now: clock, notificationProducers: false });
    t = trading(app, clock);
    producer = producerFor(app.networks[0]!, app.database.db, { confirmations: 0, priceImprovementBps: 1 });
  });
  after(async () => {
    await app?.stop();
  });

  it('a partial fill, the shortfall after it (once), the fill completing it, with price improvement and readable messages', async () => {
    const { WETH, USDC } = t.tokens;
    const owner = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const m = await t.marketOut(E18, [WETH, USDC]);
    // half the balance leaves before the auction: the order is filled as far as the balance allows (auctions held
    // back meanwhile: an auction of the whole order before the transfer would settle it whole, or revert and exclude it)
    assert.equal((await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: true })).status, 200);
    let uid: Hex;
    try {
      await app.auctionLoops.get('devnet')!.idle(); // a cycle already past the gate ends first
      uid = await t.place(owner, { sellToken: WETH, buyToken: USDC, sellAmount: E18, buyAmount: (m * 97n) / 100n, partiallyFillable: true });
      await t.send(owner, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [t.traders[1]!.address, E18 / 2n] }));
    } finally {
      await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: false });
    }
    await waitFor('the partial fill announced', async () => (await typesOf(uid)).includes('order_partially_filled'));
    await waitFor('the shortfall announced', async () => (await typesOf(uid)).includes('insufficient_balance'));
    // the order stays underfunded block after block: still one announcement
    const head = Number(await app.networks[0]!.reader.blockNumber());
    await waitFor('three more auctions', async () => (app.auctionLoops.get('devnet')?.last?.auction.block ?? 0) >= head + 3);
    assert.equal((await typesOf(uid)).filter((x) => x === 'insufficient_balance').length, 1, 'once, not every block');

    await t.send(t.traders[1]!, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [owner.address, E18 / 2n] }));
    await waitFor('the completing fill announced', async () => (await typesOf(uid)).includes('order_filled'));
    const all = await ofOrder(uid);
    const types = all.map((n) => n.type).sort();
    assert.deepEqual(types, ['insufficient_balance', 'order_filled', 'order_partially_filled', 'price_improvement', 'price_improvement']);
    assert.deepEqual((await eventsOf(uid)).filter((e) => e.startsWith('invalid')), ['invalid:insufficient_balance']);
    for (const n of all) assert.equal(n.account.length, 20);

    const partial = all.find((n) => n.type === 'order_partially_filled')!;
    const meta = partial.metadata as Record<string, unknown>;
    assert.match(partial.message, /^Partially filled: sold 0\.5 WETH for [\d.]+ USDC on devnet \(50% of the order filled\)$/);
    assert.equal(meta.executedAmount, (E18 / 2n).toString());
    assert.equal(meta.chainId, 31337);
    assert.match(meta.txHash as string, /^0x[0-9a-f]{64}$/);
    assert.equal(meta.sellToken, WETH);
    assert.equal(meta.buyToken, USDC);
    const filled = all.find((n) => n.type === 'order_filled')!;
    assert.match(filled.message, /^Sold 0\.5 WETH for [\d.]+ USDC on devnet$/);
    const improvement = all.find((n) => n.type === 'price_improvement')!;
    const im = improvement.metadata as Record<string, string | number>;
    assert.equal(im.surplusToken, USDC);
    assert.ok(BigInt(im.surplus) > 0n && Number(im.surplusBps) >= 1, 'the AMM beat a limit 3 % under the market');
    assert.equal(BigInt(im.buyAmount) - BigInt(im.limitAmount), BigInt(im.surplus));
    assert.match(improvement.message, /^Price improvement: [\d.]+ USDC \([\d.]+%\) better than your limit price selling WETH on devnet$/);
  });

  it('expiry: once validTo passed without a fill; never for an order cancelled before it expired', async () => {
    const { WETH, DAI } = t.tokens;
    const trader = t.traders[0]!;
    // both valid for 61 s; one is cancelled while still valid; then the chain's clock jumps 2 minutes ahead
    const expiring = await t.place(trader, { sellToken: WETH, buyToken: DAI, sellAmount: 10n ** 15n, buyAmount: 10n ** 30n }, 61);
    const cancelled = await t.place(trader, { sellToken: WETH, buyToken: DAI, sellAmount: 10n ** 15n + 1n, buyAmount: 10n ** 30n }, 61);
    await t.cancel(trader, cancelled);
    await t.rpc('evm_increaseTime', [120]);
    await t.rpc('evm_mine', []);
    await waitFor('the expiry announced', async () => (await typesOf(expiring)).includes('order_expired'));
    const [expired] = await ofOrder(expiring);
    assert.match(expired!.message, /^Your order to sell 0\.001 WETH for at least 1000000000000 DAI expired on devnet$/);
    assert.deepEqual(await typesOf(cancelled), ['order_cancelled'], 'cancelled, not expired');
  });

  it("a stranger's presign order in the victim's name produces no notification to the victim; the victim's own presigned one does", async () => {
    const { WETH, DAI } = t.tokens;
    const victim = await t.freshAccount([{ token: 'WETH', amount: '1' }]);
    const chainNow = Number(BigInt((await t.rpc<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false])).timestamp));
    const validTo = Math.max(chainNow, clock()) + 61;
    const post = async (sellAmount: bigint) => {
      const order = makeOrder({ sellToken: WETH, buyToken: DAI, sellAmount, buyAmount: 10n ** 30n, validTo, receiver: victim.address });
      // anyone may post a presign order with any `from` (as upstream allows): no key of the victim's is needed
      const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', { ...orderBody(order, victim.address.toLowerCase() as Hex, 'presign', victim.address), from: victim.address });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body as Hex;
    };
    const theirs = await post(10n ** 15n + 7n);
    const mine = await post(10n ** 15n + 8n);
    await t.send(victim, app.networks[0]!.settlement, encodeFunctionData({ abi: parseAbi(['function setPreSignature(bytes orderUid, bool signed)']), functionName: 'setPreSignature', args: [mine, true] }));
    await t.rpc('evm_increaseTime', [120]);
    await t.rpc('evm_mine', []);
    // the positive witness: the victim's own presigned order, expiring at the same time, is announced
    await waitFor("the victim's presigned order's expiry announced", async () => (await typesOf(mine)).includes('order_expired'));
    assert.deepEqual(await typesOf(theirs), [], "nothing for the order the victim never authorised");
    const toVictim = await listNotifications(app.database.db, victim.address.toLowerCase() as Hex, 100, 0);
    assert.deepEqual(toVictim.map((n) => n.metadata.orderId), [mine]);
  });

  it('cancellation through the API and on chain, each announced once', async () => {
    const { WETH, DAI } = t.tokens;
    const trader = t.traders[0]!;
    const byApi = await t.place(trader, { sellToken: WETH, buyToken: DAI, sellAmount: 10n ** 15n + 2n, buyAmount: 10n ** 30n });
    const onChain = await t.place(trader, { sellToken: WETH, buyToken: DAI, sellAmount: 10n ** 15n + 3n, buyAmount: 10n ** 30n });
    await t.cancel(trader, byApi);
    await t.invalidateOnChain(trader, onChain);
    await waitFor('both cancellations announced', async () => (await typesOf(byApi)).length === 1 && (await typesOf(onChain)).length === 1);
    const [api] = await ofOrder(byApi);
    const [chain] = await ofOrder(onChain);
    assert.equal(api!.type, 'order_cancelled');
    assert.equal((api!.metadata as Record<string, unknown>).cancelledBy, 'api');
    assert.match(api!.message, /^Your order to sell 0\.001 WETH for at least 1000000000000 DAI was cancelled on devnet$/);
    assert.equal(chain!.type, 'order_cancelled');
    assert.equal((chain!.metadata as Record<string, unknown>).cancelledBy, 'onchain');
    assert.match((chain!.metadata as Record<string, string>).txHash!, /^0x[0-9a-f]{64}$/);
  });

  it('producing again from scratch stores nothing twice; the listing is newest first', async () => {
    const db = app.database.db;
    const count = async () => Number((await db.selectFrom('notifications').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    await producer.step();
    const before = await count();
    assert.ok(before >= 8);
    await db.deleteFrom('notification_checkpoints').execute();
    for (let i = 0; i < 5 && (await producer.step()).behind; i++);
    await producer.step();
    assert.equal(await count(), before, 'deterministic ids: the same notifications');
    const list = await listNotifications(db, t.traders[0]!.address.toLowerCase() as `0x${string}`, 100, 0);
    assert.ok(list.length >= 4);
    for (let i = 1; i < list.length; i++) assert.ok(list[i - 1]!.timestamp >= list[i]!.timestamp, 'newest first');
  });

  it('confirmations hold fills back; a reorg below the checkpoint makes the producer look again', async () => {
    const db = app.database.db;
    await producer.step();
    const fills = await db.selectFrom('notifications').select(['id', 'metadata']).where('type', '=', 'order_filled').execute();
    assert.ok(fills.length > 0);
    const newest = fills.reduce((a, b) => (Number((a.metadata as { blockNumber: number }).blockNumber) > Number((b.metadata as { blockNumber: number }).blockNumber) ? a : b));
    await db.deleteFrom('notifications').where('id', '=', newest.id).execute();

    // a producer that wants more confirmations than the chain has blocks does not announce it
    const cautious = producerFor(app.networks[0]!, db, { confirmations: 1_000_000, priceImprovementBps: 1 });
    await cautious.step();
    assert.equal((await db.selectFrom('notifications').select('id').where('id', '=', newest.id).execute()).length, 0, 'not confirmed yet');

    // the checkpoint block's hash no longer matches the indexed chain: the producer steps back and re-produces
    const fillBlock = Number((newest.metadata as { blockNumber: number }).blockNumber);
    await db.updateTable('notification_checkpoints').set({ block_number: fillBlock + 10, block_hash: toBytes(`0x${'ee'.repeat(32)}`) }).execute();
    await producer.step();
    assert.equal((await db.selectFrom('notifications').select('id').where('id', '=', newest.id).execute()).length, 1, 'found again after the rewind');
  });
});

describe('notification producer: first start on a long chain', () => {
  const hex = (expr: string, bytes: number) => `decode(lpad(to_hex(${expr}), ${bytes * 2}, '0'), 'hex')`;
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  /** a producer of chain `chainId` whose indexer has checked up to `head`, counting the block headers it reads */
  async function producerAt(chainId: number, head: number, trades: number[]) {
    const db = database.db;
    for (const [i, block] of trades.entries()) {
      const uid = hex(String(chainId * 1000 + i + 1), 56);
      await sql.raw(`insert into orders (chain_id, uid, owner, sell_token, buy_token, sell_amount, buy_amount, valid_to, app_data, fee_amount, kind, partially_fillable, signature, signing_scheme, class, settlement_contract)
        values (${chainId}, ${uid}, ${hex('17', 20)}, ${hex('1', 20)}, ${hex('2', 20)}, 1000000000000000000, 3000000000, 4000000000, ${hex('0', 32)}, 0, 'sell', false, '\\x00', 'eip712', 'limit', ${hex('9', 20)})`).execute(db);
      await sql.raw(`insert into trades (chain_id, block_number, log_index, order_uid, owner, sell_token, buy_token, sell_amount, buy_amount, fee_amount, tx_hash, block_timestamp)
        values (${chainId}, ${block}, 0, ${uid}, ${hex('17', 20)}, ${hex('1', 20)}, ${hex('2', 20)}, 1000000000000000000, 3000000000, 0, ${hex(String(block), 32)}, now())`).execute(db);
    }
    await sql.raw(`insert into indexer_checkpoints (chain_id, name, block_number, block_hash) values (${chainId}, 'main', ${head}, ${hex('77', 32)})`).execute(db);
    const reads: number[] = [];
    const producer = new NotificationProducer({
      db,
      chain: { chainId, name: `chain-${chainId}` },
      tokens: async (tokens) => tokens.map((_, i) => (i % 2 === 0 ? { symbol: 'WETH', decimals: 18 } : { symbol: 'USDC', decimals: 6 })),
      head: async () => head,
      block: async (n) => (reads.push(n), { hash: `0x${n.toString(16).padStart(64, '0')}`, timestamp: 1_700_000_000 + n * 12 }),
      confirmations: 0,
      priceImprovementBps: 1,
    });
    return { producer, reads };
  }

  it('with nothing indexed to announce, the first step goes straight to the checked head (its header only, not one per 5 000 blocks)', async () => {
    const { producer, reads } = await producerAt(1, 20_000_000, []);
    const step = await producer.step();
    assert.equal(step.toBlock, 20_000_000);
    assert.equal(step.behind, false);
    assert.ok(reads.length <= 2 && reads.every((n) => n === 20_000_000), `headers read: ${reads.join(', ')}`);
  });

  it('starts at the first indexed fill: it is announced in the first step', async () => {
    const { producer } = await producerAt(2, 20_000_000, [19_998_000]);
    const step = await producer.step();
    assert.equal(step.toBlock, 20_000_000);
    assert.ok(step.produced >= 1, `produced ${step.produced}`);
    const types = (await database.db.selectFrom('notifications').select('type').where('chain_id', '=', 2).execute()).map((n) => n.type);
    assert.ok(types.includes('order_filled'), types.join(', '));
  });
});
