/**
 * Every reason the auction builder leaves an order out (issue 15, point 6), each provoked by an order made for it,
 * on the real devnet and PGlite; orders are inserted directly (the builder does not check signatures), next to a
 * control order of a funded demo trader that makes it into the auction.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { keccak256, stringToBytes, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { startTestDevnet, type TestDevnet } from '../chain/test-devnet.js';
import { createChainClient } from '../chain/client.js';
import { ChainReader } from '../chain/reader.js';
import { openDatabase, type Database } from '../db/connection.js';
import { toBytes, toHex, toNumeric } from '../db/codec.js';
import { AmmNativePrice } from '../orderbook/pricing/amm-native-price.js';
import { AuctionBuilder, type AuctionBuilderOptions } from './build-auction.js';

const CHAIN = 31337;

describe('the auction builder leaves out each kind of unsettleable order, with its reason (issue 15, point 6)', () => {
  let chain: TestDevnet;
  let database: Database;
  let options: AuctionBuilderOptions;
  let trader: Address;
  let weth: Address;
  let usdc: Address;
  let dai: Address;
  let now: number;

  before(async () => {
    chain = await startTestDevnet();
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    const d = chain.devnet.deployment;
    const client = createChainClient({ chainId: CHAIN, rpcUrl: chain.rpcUrl, timeoutMs: 30_000 });
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address;
    [weth, usdc, dai] = [token('WETH'), token('USDC'), token('DAI')];
    trader = d.accounts.find((a) => a.role === 'trader')!.address.toLowerCase() as Address;
    options = {
      chainId: CHAIN,
      db: database.db,
      reader: new ChainReader(client),
      settlement: d.contracts.settlement,
      vaultRelayer: d.contracts.vaultRelayer,
      hooksTrampoline: null,
      nativePrices: new AmmNativePrice({ client: client as never, factory: d.contracts.ammFactory, wrappedNative: weth, connectors: [weth], ttlMs: 0 }),
    };
    now = Math.floor(Date.now() / 1000);
  });
  after(async () => {
    await database?.close();
    await chain?.stop();
  });

  async function insert(o: { owner: Address; sellToken?: Address; buyToken?: Address; sellAmount?: bigint; receiver?: Address | null; signingScheme?: 'eip712' | 'presign'; appData?: Hex; createdAt?: Date; partiallyFillable?: boolean; buyAmount?: bigint }): Promise<Hex> {
    const uid = randomBytes(56);
    await database.db.insertInto('orders').values({
      chain_id: CHAIN, uid, owner: toBytes(o.owner), created_at: o.createdAt ?? new Date(), sell_token: toBytes(o.sellToken ?? usdc), buy_token: toBytes(o.buyToken ?? weth),
      receiver: o.receiver ? toBytes(o.receiver) : null, sell_amount: toNumeric(o.sellAmount ?? 10n ** 6n), buy_amount: toNumeric(o.buyAmount ?? 1n), valid_to: now + 3600,
      app_data: toBytes(o.appData ?? (`0x${'00'.repeat(32)}` as Hex)), fee_amount: '0', kind: 'sell', partially_fillable: o.partiallyFillable ?? false, signature: randomBytes(65),
      signing_scheme: o.signingScheme ?? 'eip712', sell_token_balance: 'erc20', buy_token_balance: 'erc20', class: 'limit', settlement_contract: toBytes(options.settlement),
    }).execute();
    return toHex(uid);
  }

  it('reports banned_user, unsupported_token, invalid_signature, hooks_unsupported, insufficient_balance, insufficient_allowance and missing_native_price', async () => {
    const fresh = (): Address => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address;
    const bannedOwner = fresh();
    const bannedReceiver = fresh();
    const unapproved = fresh();
    await chain.mint(unapproved, 'USDC', '5');
    // an app-data document with a pre-hook (and no trampoline configured)
    const doc = JSON.stringify({ version: '1.3.0', metadata: { hooks: { pre: [{ target: usdc, callData: '0x', gasLimit: '50000' }] } } });
    const hooked = keccak256(stringToBytes(doc));
    await database.db.insertInto('app_data').values({ contract_app_data: toBytes(hooked), full_app_data: Buffer.from(doc) }).execute();
    const unpriced = `0x${randomBytes(20).toString('hex')}` as Address;

    const expected = new Map<Hex, string>([
      [await insert({ owner: bannedOwner }), 'invalid:banned_user'],
      [await insert({ owner: trader, receiver: bannedReceiver }), 'invalid:banned_user'],
      [await insert({ owner: trader, buyToken: dai }), 'invalid:unsupported_token'],
      [await insert({ owner: trader, signingScheme: 'presign' }), 'invalid:invalid_signature'],
      [await insert({ owner: trader, appData: hooked }), 'filtered:hooks_unsupported'],
      [await insert({ owner: fresh() }), 'invalid:insufficient_balance'],
      [await insert({ owner: unapproved }), 'invalid:insufficient_allowance'],
      [await insert({ owner: trader, buyToken: unpriced }), 'filtered:missing_native_price'],
    ]);
    const control = await insert({ owner: trader });

    const builder = new AuctionBuilder({ ...options, bannedAddresses: new Set([bannedOwner, bannedReceiver]), deniedTokens: new Set([dai]) });
    const head = await chain.blockNumber();
    const built = await builder.build({ number: BigInt(head), timestamp: BigInt(now) });
    assert.deepEqual(built.auction.orders.map((o) => o.uid), [control], 'only the control order is in the auction');
    const got = new Map(built.excluded.map((e) => [e.uid, `${e.label}:${e.reason}`]));
    assert.deepEqual(got, expected);

    // the same orders without the bans, the denial and with a trampoline: those reasons go away
    const relaxed = new AuctionBuilder({ ...options, hooksTrampoline: chain.devnet.deployment.contracts.hooksTrampoline });
    const again = await relaxed.build({ number: BigInt(head), timestamp: BigInt(now) });
    const reasons = new Set(again.excluded.map((e) => e.reason));
    for (const gone of ['banned_user', 'unsupported_token', 'hooks_unsupported']) assert.ok(!reasons.has(gone as never), `${gone} needs its cause`);
    assert.ok(reasons.has('insufficient_balance') && reasons.has('insufficient_allowance') && reasons.has('missing_native_price') && reasons.has('invalid_signature'));
  });

  it('lets the orders of one auction share half the block gas limit for their hooks (issue 19)', async () => {
    const gasLimit = (await options.reader.client.getBlock()).gasLimit;
    // two orders whose post-hooks each ask for 40 % of a block: together they could not settle in one
    const doc = JSON.stringify({ version: '1.3.0', metadata: { hooks: { post: [{ target: usdc, callData: '0x', gasLimit: String((gasLimit * 2n) / 5n) }] } } });
    const heavy = keccak256(stringToBytes(doc));
    await database.db.insertInto('app_data').values({ contract_app_data: toBytes(heavy), full_app_data: Buffer.from(doc) }).execute();
    const first = await insert({ owner: trader, appData: heavy });
    const second = await insert({ owner: trader, appData: heavy });
    const plain = await insert({ owner: trader });
    const builder = new AuctionBuilder({ ...options, hooksTrampoline: chain.devnet.deployment.contracts.hooksTrampoline });
    const built = await builder.build({ number: BigInt(await chain.blockNumber()), timestamp: BigInt(now) });
    const inAuction = new Set(built.auction.orders.map((o) => o.uid));
    const hooked = [first, second].filter((uid) => inAuction.has(uid));
    assert.equal(hooked.length, 1, 'one of the heavy orders is in the auction');
    assert.ok(inAuction.has(plain), 'orders without hooks are not held back');
    const total = built.auction.orders.reduce((sum, o) => sum + o.hookGas, 0n);
    assert.ok(total <= gasLimit / 2n, `the auction's hooks fit half a block (${total} of ${gasLimit})`);
    const left = [first, second].find((uid) => !inAuction.has(uid))!;
    assert.deepEqual(built.excluded.find((e) => e.uid === left), { uid: left, label: 'filtered', reason: 'hook_gas_limit' });
  });

  it("gives an owner's fill-or-kill orders its balance, the most generous limit then the oldest first: one the others leave short is out (issue 19, major 9)", async () => {
    const [funds] = await options.reader.balancesAndAllowances([{ owner: trader, token: usdc }], options.vaultRelayer, { blockNumber: BigInt(await chain.blockNumber()) });
    const balance = funds!.balance!;
    const part = (balance * 6n) / 10n; // either order fits the balance alone, both together do not
    const t0 = Date.now();
    const newer = await insert({ owner: trader, sellAmount: part, createdAt: new Date(t0 - 1_000) });
    const older = await insert({ owner: trader, sellAmount: part, createdAt: new Date(t0 - 2_000) });
    // the oldest of all, but asking far more than the market gives: it does not hold the balance the others can use
    const farOff = await insert({ owner: trader, sellAmount: part, buyAmount: 10n ** 30n, createdAt: new Date(t0 - 3_000) });
    // a partially fillable order still has what the others leave
    const partial = await insert({ owner: trader, sellAmount: balance, partiallyFillable: true, createdAt: new Date(t0 - 500) });
    const built = await new AuctionBuilder(options).build({ number: BigInt(await chain.blockNumber()), timestamp: BigInt(now) });
    const inAuction = new Set(built.auction.orders.map((o) => o.uid));
    assert.ok(inAuction.has(older), 'the older order is in the auction');
    assert.ok(inAuction.has(partial), 'the partially fillable order is in the auction');
    assert.ok(!inAuction.has(newer), 'the newer order is not');
    assert.deepEqual(built.excluded.find((e) => e.uid === farOff), { uid: farOff, label: 'invalid', reason: 'insufficient_balance' });
    assert.deepEqual(built.excluded.find((e) => e.uid === newer), { uid: newer, label: 'invalid', reason: 'insufficient_balance' });
    // the auction's orders never ask more of the owner, together, than it has (what verifySolution checks)
    const fillOrKill = built.auction.orders.filter((o) => o.owner === trader && o.sellToken === usdc && !o.partiallyFillable);
    assert.ok(fillOrKill.reduce((s, o) => s + o.sellAmount + o.feeAmount, 0n) <= balance);
  });
});
