import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { Kysely } from 'kysely';
import { engines } from '../../../test/fixtures/databases.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { fromNumeric, toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { createChainClient, type ChainClient } from '../client.js';
import { startFaultyRpcProxy } from '../faulty-rpc-proxy.js';
import { ChainReader } from '../reader.js';
import { startTestDevnet, type TestDevnet } from '../test-devnet.js';
import type { Touched } from './decode-logs.js';
import { Indexer, type IndexerLogger, type ReorgEvent } from './indexer.js';
import { topTokenHolders } from './holder-queries.js';
import { computeOrderUid, encodeSettle, encodeSettlementSignature, encodeTradeFlags, orderDigest, orderDomain, type Order } from '../../protocol/index.js';

const tokenAbi = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function totalSupply() view returns (uint256)',
  'function deposit() payable',
  'function withdraw(uint256 wad)',
]);
const settlementAbi = parseAbi(['function setPreSignature(bytes orderUid, bool signed)', 'function invalidateOrder(bytes orderUid)']);

const quiet: IndexerLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

let chain: TestDevnet;
let client: ChainClient;
let reader: ChainReader;

before(async () => {
  chain = await startTestDevnet();
  client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 20_000 });
  reader = new ChainReader(client);
});

after(async () => {
  await chain?.stop();
});

const deployment = () => chain.devnet.deployment;
const tokenAddresses = () => deployment().tokens.map((t) => t.address);
const token = (symbol: string) => deployment().tokens.find((t) => t.symbol === symbol)!.address;
const trader = (i: number) => deployment().accounts.filter((a) => a.role === 'trader')[i].address;

function newIndexer(db: Kysely<DB>, overrides: Partial<ConstructorParameters<typeof Indexer>[0]> = {}): Indexer {
  return new Indexer({
    chainId: 31337,
    client,
    db,
    settlement: deployment().contracts.settlement,
    tokens: tokenAddresses,
    pools: () => [],
    factory: deployment().contracts.ammFactory,
    logger: quiet,
    ...overrides,
  });
}

/** Every holder row equals balanceOf on chain, the rows add up to totalSupply, and no holder is missing. */
async function assertHolderBalancesMatchChain(db: Kysely<DB>, tokenAddress: Address, mustHold: Address[] = [], chainId = 31337): Promise<void> {
  const rows = await db.selectFrom('token_holder_balances').select(['holder', 'balance']).where('chain_id', '=', chainId).where('token', '=', toBytes(tokenAddress)).execute();
  const holders = rows.map((r) => toHex(r.holder) as Address);
  const onChain = await reader.balancesAndAllowances(holders.map((owner) => ({ owner, token: tokenAddress })), deployment().contracts.vaultRelayer);
  rows.forEach((row, i) => assert.equal(fromNumeric(row.balance), onChain[i].balance, `balance of ${holders[i]} in ${tokenAddress}`));
  const total = rows.reduce((sum, r) => sum + fromNumeric(r.balance), 0n);
  const supply = await client.readContract({ address: tokenAddress, abi: tokenAbi, functionName: 'totalSupply' });
  assert.equal(total, supply, `holder balances of ${tokenAddress} add up to totalSupply`);
  for (const owner of mustHold) assert.ok(holders.includes(owner.toLowerCase() as Address), `${owner} missing from holders of ${tokenAddress}`);
}

async function count(db: Kysely<DB>, table: 'erc20_transfers' | 'presignature_events' | 'invalidations' | 'amm_syncs' | 'amm_swaps' | 'token_holder_balances'): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('chain_id', '=', 31337).executeTakeFirstOrThrow();
  return Number(row.n);
}

const fresh = (): Address => privateKeyToAddress(generatePrivateKey());
const uidOf = (owner: Address): Hex => `0x${generatePrivateKey().slice(2)}${owner.slice(2).toLowerCase()}ffffffff` as Hex;

for (const fixture of await engines()) {
  describe(`Indexer on the devnet with ${fixture.engine}`, { skip: fixture.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    let indexer: Indexer;
    const indexed: Array<{ from: number; to: number; touched: Touched }> = [];

    before(async () => {
      database = await fixture.open();
      indexer = newIndexer(database.db);
      indexer.onIndexed((from, to, touched) => void indexed.push({ from, to, touched }));
    });
    after(async () => {
      await database?.dispose();
    });

    it('indexes the devnet from block 0: mints, deposits, pools from the factory, holder balances equal the chain', async () => {
      const head = await chain.blockNumber();
      assert.equal(await indexer.indexTo(head), head);
      assert.equal(indexed[0].from, 0, 'a devnet starts at block 0');

      const pools = await database.db.selectFrom('amm_pools').selectAll().where('chain_id', '=', 31337).execute();
      assert.equal(pools.length, deployment().pools.length);
      for (const p of deployment().pools) {
        const row = pools.find((r) => toHex(r.address) === p.address.toLowerCase());
        assert.ok(row, `pool ${p.address} discovered from PairCreated`);
        assert.equal(toHex(row.token0), p.token0.toLowerCase());
        assert.equal(toHex(row.token1), p.token1.toLowerCase());
      }
      const syncs = await database.db.selectFrom('amm_syncs').selectAll().where('chain_id', '=', 31337).execute();
      assert.ok(syncs.length >= deployment().pools.length, 'addLiquidity emitted a Sync per pool');
      assert.ok(syncs.every((s) => s.block_timestamp instanceof Date && s.block_timestamp.getTime() > 0));

      const mints = await database.db.selectFrom('erc20_transfers').select('kind').where('chain_id', '=', 31337).where('from_address', '=', toBytes('0x' + '00'.repeat(20))).execute();
      assert.ok(mints.some((m) => m.kind === 'transfer'), 'DevnetToken mints');
      assert.ok(mints.some((m) => m.kind === 'deposit'), 'WETH deposits');

      for (const t of tokenAddresses()) await assertHolderBalancesMatchChain(database.db, t, [trader(0), trader(1), deployment().contracts.smartWallet]);
      const top = await topTokenHolders(database.db, 31337, token('USDC'), 3);
      assert.equal(top.length, 3);
      assert.ok(top[0].balance >= top[1].balance && top[1].balance >= top[2].balance, 'largest first');
    });

    it('records transfers (WETH deposit/withdrawal included) and tells listeners what changed; approvals add nothing', async () => {
      const someone = fresh();
      const usdc = token('USDC');
      const weth = token('WETH');
      const transfersBefore = await count(database.db, 'erc20_transfers');
      const [transfer] = await chain.sendAndWait([
        { from: trader(0), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [someone, 1_234_567n] }) },
        { from: trader(0), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'approve', args: [someone, 5n] }) },
        { from: trader(1), to: weth, data: encodeFunctionData({ abi: tokenAbi, functionName: 'deposit' }), value: 3n * 10n ** 18n },
      ]);
      await chain.sendAndWait([{ from: trader(1), to: weth, data: encodeFunctionData({ abi: tokenAbi, functionName: 'withdraw', args: [10n ** 18n] }) }]);
      const head = await chain.blockNumber();
      indexed.length = 0;
      await indexer.indexTo(head);

      const rows = await database.db.selectFrom('erc20_transfers').selectAll().where('chain_id', '=', 31337).where('to_address', '=', toBytes(someone)).execute();
      assert.equal(rows.length, 1);
      assert.equal(fromNumeric(rows[0].value), 1_234_567n);
      assert.equal(toHex(rows[0].tx_hash), transfer.transactionHash.toLowerCase());
      assert.equal(Number(rows[0].block_number), transfer.blockNumber);
      assert.equal((await count(database.db, 'erc20_transfers')) - transfersBefore, 3, 'transfer + deposit + withdrawal, no row for approve');
      const kinds = await database.db.selectFrom('erc20_transfers').select('kind').where('chain_id', '=', 31337).where('block_number', '>', transfer.blockNumber - 1).where('token', '=', toBytes(weth)).execute();
      assert.deepEqual(kinds.map((k) => k.kind).sort(), ['deposit', 'withdrawal']);

      await assertHolderBalancesMatchChain(database.db, usdc, [someone]);
      await assertHolderBalancesMatchChain(database.db, weth, [trader(1)]);
      const touched = indexed.flatMap((e) => e.touched.owners);
      assert.ok(touched.includes(someone.toLowerCase() as Address) && touched.includes(trader(1).toLowerCase() as Address));
      assert.ok(indexed.flatMap((e) => e.touched.tokens).includes(weth.toLowerCase() as Address));
    });

    it('indexes setPreSignature and invalidateOrder on the real settlement contract', async () => {
      const owner = trader(1);
      const presigned = uidOf(owner);
      const invalidated = uidOf(owner);
      const settlement = deployment().contracts.settlement;
      const receipts = await chain.sendAndWait([
        { from: owner, to: settlement, data: encodeFunctionData({ abi: settlementAbi, functionName: 'setPreSignature', args: [presigned, true] }) },
        { from: owner, to: settlement, data: encodeFunctionData({ abi: settlementAbi, functionName: 'invalidateOrder', args: [invalidated] }) },
      ]);
      assert.deepEqual(receipts.map((r) => r.status), ['0x1', '0x1']);
      await chain.sendAndWait([{ from: owner, to: settlement, data: encodeFunctionData({ abi: settlementAbi, functionName: 'setPreSignature', args: [presigned, false] }) }]);
      indexed.length = 0;
      await indexer.indexTo(await chain.blockNumber());

      const presignatures = await database.db.selectFrom('presignature_events').selectAll().where('chain_id', '=', 31337).where('order_uid', '=', toBytes(presigned)).orderBy('block_number').orderBy('log_index').execute();
      assert.deepEqual(presignatures.map((p) => p.signed), [true, false]);
      assert.equal(toHex(presignatures[0].owner), owner.toLowerCase());
      const invalidations = await database.db.selectFrom('invalidations').selectAll().where('chain_id', '=', 31337).where('order_uid', '=', toBytes(invalidated)).execute();
      assert.equal(invalidations.length, 1);
      assert.equal(toHex(invalidations[0].tx_hash), receipts[1].transactionHash.toLowerCase());
      const uids = indexed.flatMap((e) => e.touched.orderUids);
      assert.ok(uids.includes(presigned) && uids.includes(invalidated));
    });

    it('indexes a real settlement: Trade (tx hash, block timestamp), Settlement and Interaction', async () => {
      const owner = trader(1);
      const solver = deployment().accounts.find((a) => a.role === 'solver')!.address;
      const [usdc, dai] = [token('USDC'), token('DAI')];
      const latest = await client.getBlock();
      const order: Order = {
        sellToken: usdc,
        buyToken: dai,
        receiver: null,
        sellAmount: 100_000_000n,
        buyAmount: 90n * 10n ** 18n,
        validTo: Number(latest.timestamp) + 3600,
        appData: `0x${'00'.repeat(32)}`,
        feeAmount: 0n,
        kind: 'sell',
        partiallyFillable: false,
        sellTokenBalance: 'erc20',
        buyTokenBalance: 'erc20',
      };
      const uid = computeOrderUid(orderDigest(order, orderDomain(31337)), owner, order.validTo);
      await chain.sendAndWait([
        { from: owner, to: settlementAddress(), data: encodeFunctionData({ abi: settlementAbi, functionName: 'setPreSignature', args: [uid, true] }) },
        { from: trader(0), to: dai, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [settlementAddress(), 100n * 10n ** 18n] }) },
      ]);
      const data = encodeSettle({
        tokens: [usdc, dai],
        clearingPrices: [10n ** 12n, 1n],
        trades: [
          {
            sellTokenIndex: 0n,
            buyTokenIndex: 1n,
            receiver: '0x0000000000000000000000000000000000000000',
            sellAmount: order.sellAmount,
            buyAmount: order.buyAmount,
            validTo: order.validTo,
            appData: order.appData,
            feeAmount: 0n,
            flags: encodeTradeFlags({ kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20', signingScheme: 'presign' }),
            executedAmount: 0n,
            signature: encodeSettlementSignature('presign', '0x', owner),
          },
        ],
        interactions: [[], [{ target: dai, value: 0n, callData: encodeFunctionData({ abi: tokenAbi, functionName: 'approve', args: [solver, 0n] }) }], []],
      });
      const [settled] = await chain.sendAndWait([{ from: solver, to: settlementAddress(), data, gas: 1_000_000n }]);
      assert.equal(settled.status, '0x1', 'the settlement went through');
      indexed.length = 0;
      await indexer.indexTo(await chain.blockNumber());

      const trades = await database.db.selectFrom('trades').selectAll().where('chain_id', '=', 31337).where('order_uid', '=', toBytes(uid)).execute();
      assert.equal(trades.length, 1);
      const [trade] = trades;
      assert.equal(toHex(trade.owner), owner.toLowerCase());
      assert.deepEqual([toHex(trade.sell_token), toHex(trade.buy_token)], [usdc.toLowerCase(), dai.toLowerCase()]);
      assert.deepEqual([fromNumeric(trade.sell_amount), fromNumeric(trade.buy_amount), fromNumeric(trade.fee_amount)], [100_000_000n, 100n * 10n ** 18n, 0n]);
      assert.equal(toHex(trade.tx_hash), settled.transactionHash.toLowerCase());
      const block = await client.getBlock({ blockNumber: BigInt(settled.blockNumber) });
      assert.equal(trade.block_timestamp?.getTime(), Number(block.timestamp) * 1000);
      const settlements = await database.db.selectFrom('settlements').selectAll().where('chain_id', '=', 31337).where('tx_hash', '=', toBytes(settled.transactionHash)).execute();
      assert.deepEqual(settlements.map((r) => toHex(r.solver)), [solver.toLowerCase()]);
      const interactions = await database.db.selectFrom('settlement_interactions').selectAll().where('chain_id', '=', 31337).where('tx_hash', '=', toBytes(settled.transactionHash)).execute();
      assert.deepEqual(interactions.map((r) => [toHex(r.target), toHex(r.selector), fromNumeric(r.value)]), [[dai.toLowerCase(), '0x095ea7b3', 0n]]);
      assert.ok(indexed.some((e) => e.touched.orderUids.includes(uid)));
      await assertHolderBalancesMatchChain(database.db, usdc, [settlementAddress()]);
      await assertHolderBalancesMatchChain(database.db, dai, [owner]);
    });

    it('rewinds a reorg to the common ancestor, corrects holder balances and re-indexes the new branch', async () => {
      const usdc = token('USDC');
      const lost = fresh();
      const kept = fresh();
      const snapshot = await chain.rpc<string>('evm_snapshot');
      const forkPoint = await chain.blockNumber();
      await chain.sendAndWait([{ from: trader(0), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [lost, 777n] }) }]);
      await chain.sendAndWait([{ from: trader(0), to: settlementAddress(), data: encodeFunctionData({ abi: settlementAbi, functionName: 'setPreSignature', args: [uidOf(trader(0)), true] }) }]);
      await chain.mine(2);
      const oldHead = await chain.blockNumber();
      await indexer.indexTo(oldHead);
      assert.equal(await holderBalance(database.db, usdc, lost), 777n);
      const presignaturesBefore = await count(database.db, 'presignature_events');

      const reorgs: ReorgEvent[] = [];
      const stop = indexer.onReorg((e) => void reorgs.push(e));
      assert.equal(await chain.rpc('evm_revert', [snapshot]), true);
      await chain.sendAndWait([{ from: trader(0), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [kept, 555n] }) }]);
      await chain.mine(4);
      const newHead = await chain.blockNumber();
      await indexer.indexTo(newHead);
      stop();

      assert.equal(reorgs.length, 1);
      assert.ok(reorgs[0].commonAncestor !== null && reorgs[0].commonAncestor >= forkPoint && reorgs[0].commonAncestor < oldHead, `ancestor ${reorgs[0].commonAncestor}`);
      assert.ok(reorgs[0].touched.owners.includes(lost.toLowerCase() as Address), 'listeners learn what the removed rows touched');
      assert.equal(await holderBalance(database.db, usdc, lost), null, 'the lost branch is gone');
      assert.equal(await holderBalance(database.db, usdc, kept), 555n);
      const lostRows = await database.db.selectFrom('erc20_transfers').select('block_number').where('chain_id', '=', 31337).where('to_address', '=', toBytes(lost)).execute();
      assert.equal(lostRows.length, 0);
      assert.equal(await count(database.db, 'presignature_events'), presignaturesBefore - 1, 'the presignature of the lost branch is gone');
      await assertHolderBalancesMatchChain(database.db, usdc, [kept, trader(0)]);

      const checkpoint = await database.db.selectFrom('indexer_checkpoints').selectAll().where('chain_id', '=', 31337).executeTakeFirstOrThrow();
      const block = await client.getBlock({ blockNumber: BigInt(checkpoint.block_number) });
      assert.equal(Number(checkpoint.block_number), newHead);
      assert.equal(toHex(checkpoint.block_hash), block.hash);
      const remembered = await database.db.selectFrom('indexed_blocks').select(['number', 'hash']).where('chain_id', '=', 31337).where('number', '>', forkPoint).execute();
      for (const r of remembered) assert.equal(toHex(r.hash), (await client.getBlock({ blockNumber: BigInt(r.number) })).hash, `remembered block ${r.number}`);
    });

    it('resumes from the checkpoint after a restart without duplicating anything', async () => {
      const usdc = token('USDC');
      const counts = { transfers: await count(database.db, 'erc20_transfers'), holders: await count(database.db, 'token_holder_balances'), syncs: await count(database.db, 'amm_syncs') };
      const checkpoint = indexer.stats.checkpoint!;
      const someone = fresh();
      await chain.sendAndWait([{ from: trader(1), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [someone, 42n] }) }]);

      const restarted = newIndexer(database.db);
      const seen: number[] = [];
      restarted.onIndexed((from) => void seen.push(from));
      await restarted.indexTo(await chain.blockNumber());
      assert.equal(seen[0], checkpoint + 1, 'continues right after the checkpoint, no back-fill');
      assert.equal(await count(database.db, 'erc20_transfers'), counts.transfers + 1);
      assert.equal(await count(database.db, 'token_holder_balances'), counts.holders + 1);
      assert.equal(await count(database.db, 'amm_syncs'), counts.syncs);
      await assertHolderBalancesMatchChain(database.db, usdc, [someone]);
    });
  });
}

describe('Indexer sources and faults (PGlite)', () => {
  // one PGlite for the suite (opening one costs seconds); each test indexes under its own chain id
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  it('back-fills a token that starts being tracked later, then follows it live', async () => {
    const chainId = 41001;
    let tracked = [token('WETH')];
    const indexer = newIndexer(database.db, { chainId, startBlock: 0, tokens: () => tracked, factory: null });
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(await holderCount(database.db, token('DAI'), chainId), 0);

    tracked = [token('WETH'), token('DAI')];
    const ranges: Array<[number, number]> = [];
    indexer.onIndexed((from, to) => void ranges.push([from, to]));
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(ranges[0][0], 0, 'back-fill starts at the first indexed block');
    await assertHolderBalancesMatchChain(database.db, token('DAI'), [trader(0), trader(1)], chainId);

    // paused while untracked, caught up when tracked again
    tracked = [token('WETH')];
    await indexer.indexTo(await chain.blockNumber());
    const someone = fresh();
    await chain.sendAndWait([{ from: trader(0), to: token('DAI'), data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [someone, 9n] }) }]);
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(await holderBalance(database.db, token('DAI'), someone, chainId), null, 'not followed while untracked');
    tracked = [token('WETH'), token('DAI')];
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(await holderBalance(database.db, token('DAI'), someone, chainId), 9n);
    await assertHolderBalancesMatchChain(database.db, token('DAI'), [], chainId);
  });

  it('follows pools given by the caller: reads token0/token1 into amm_pools and indexes Sync/Swap', async () => {
    const chainId = 41008;
    const [pool] = deployment().pools;
    const notAPool = fresh();
    const warnings: string[] = [];
    const indexer = newIndexer(database.db, {
      chainId,
      startBlock: 0,
      factory: null,
      tokens: () => [],
      pools: () => [pool.address, notAPool],
      logger: { ...quiet, warn: (_o, msg) => void warnings.push(msg ?? '') },
    });
    await indexer.indexTo(await chain.blockNumber());
    await indexer.indexTo(await chain.blockNumber());
    const rows = await database.db.selectFrom('amm_pools').selectAll().where('chain_id', '=', chainId).execute();
    assert.deepEqual(rows.map((r) => [toHex(r.address), toHex(r.token0), toHex(r.token1), r.factory]), [[pool.address.toLowerCase(), pool.token0.toLowerCase(), pool.token1.toLowerCase(), null]]);
    assert.equal(warnings.length, 1, 'an address that is not a pair is reported once');
    const syncs = await database.db.selectFrom('amm_syncs').select(['reserve0', 'reserve1']).where('chain_id', '=', chainId).orderBy('block_number', 'desc').orderBy('log_index', 'desc').execute();
    assert.ok(syncs.length >= 1);
    const reserves = await client.readContract({ address: pool.address, abi: parseAbi(['function getReserves() view returns (uint112, uint112, uint32)']), functionName: 'getReserves' });
    assert.deepEqual([fromNumeric(syncs[0].reserve0), fromNumeric(syncs[0].reserve1)], [reserves[0], reserves[1]], 'the latest Sync is the current reserves');
  });

  it('starts at the head on a chain other than the devnet, at block 0 on the devnet', async () => {
    const starts: number[] = [];
    const head = await chain.blockNumber();
    const elsewhere = newIndexer(database.db, { chainId: 41002 });
    elsewhere.onIndexed((from) => void starts.push(from));
    await elsewhere.indexTo(head);
    assert.equal(starts[0], head);
    const configured = newIndexer(database.db, { chainId: 41003, startBlock: 5 });
    configured.onIndexed((from) => void starts.push(from));
    await configured.indexTo(head);
    assert.equal(starts[1], 5);
    assert.equal(await newIndexer(database.db, { chainId: 31337 }).indexTo(3), 3);
    const first = await database.db.selectFrom('indexer_sources').select('from_block').where('chain_id', '=', 31337).executeTakeFirstOrThrow();
    assert.equal(Number(first.from_block), 0);
  });

  it('re-indexes from the first block when a reorg is deeper than the remembered headers', async () => {
    const chainId = 41004;
    const indexer = newIndexer(database.db, { chainId, startBlock: 0, reorgWindow: 2 });
    const reorgs: ReorgEvent[] = [];
    indexer.onReorg((e) => void reorgs.push(e));
    const lost = fresh();
    const snapshot = await chain.rpc<string>('evm_snapshot');
    await chain.sendAndWait([{ from: trader(0), to: token('WBTC'), data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [lost, 1_000n] }) }]);
    await chain.mine(5);
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(await holderBalance(database.db, token('WBTC'), lost, chainId), 1_000n);
    const remembered = await database.db.selectFrom('indexed_blocks').select('number').where('chain_id', '=', chainId).execute();
    assert.ok(remembered.length <= 2, 'only the window is remembered');

    await chain.rpc('evm_revert', [snapshot]);
    await chain.mine(7);
    const ranges: number[] = [];
    indexer.onIndexed((from) => void ranges.push(from));
    await indexer.indexTo(await chain.blockNumber());
    assert.equal(reorgs.length, 1);
    assert.equal(reorgs[0].commonAncestor, null);
    assert.equal(ranges[0], 0, 'indexed again from block 0');
    assert.equal(await holderBalance(database.db, token('WBTC'), lost, chainId), null);
    for (const t of tokenAddresses()) await assertHolderBalancesMatchChain(database.db, t, [], chainId);
  });

  it('shrinks the block range when the node refuses wide eth_getLogs, and still indexes everything', async () => {
    const chainId = 41005;
    const proxy = await startFaultyRpcProxy(chain.rpcUrl);
    try {
      proxy.maxLogRange = 7;
      const proxied = createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 10_000, retryBaseDelayMs: 10 });
      const indexer = newIndexer(database.db, { chainId, startBlock: 0, client: proxied, blockRange: 1000 });
      const head = await chain.blockNumber();
      assert.equal(await indexer.indexTo(head), head);
      assert.ok(indexer.stats.ranges >= Math.ceil((head + 1) / 7), `ranges ${indexer.stats.ranges}`);
      for (const t of tokenAddresses()) await assertHolderBalancesMatchChain(database.db, t, [], chainId);
    } finally {
      await proxy.close();
    }
  });

  it('run() follows new blocks, rides out an RPC outage and stops on abort', { timeout: 120_000 }, async () => {
    const chainId = 41006;
    const proxy = await startFaultyRpcProxy(chain.rpcUrl);
    const controller = new AbortController();
    const warnings: string[] = [];
    try {
      const proxied = createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 5_000, retryCount: 1, retryBaseDelayMs: 10 });
      const feedReader = new ChainReader(proxied, { pollingIntervalMs: 100 });
      const indexer = newIndexer(database.db, {
        chainId,
        startBlock: 0,
        client: proxied,
        blockFeed: feedReader.blockFeed,
        pollingIntervalMs: 2_000,
        logger: { ...quiet, warn: (_o, msg) => void warnings.push(msg ?? '') },
      });
      const owners = new Set<string>();
      indexer.onIndexed((_f, _t, touched) => touched.owners.forEach((o) => owners.add(o)));
      const running = indexer.run(controller.signal);

      const waitFor = async (cond: () => boolean | Promise<boolean>, what: string) => {
        const deadline = Date.now() + 30_000;
        while (!(await cond())) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const head = await chain.blockNumber();
      await waitFor(() => (indexer.stats.checkpoint ?? -1) >= head, 'catch-up');

      proxy.down = true;
      const someone = fresh();
      await chain.sendAndWait([{ from: trader(0), to: token('COW'), data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [someone, 1n] }) }]);
      await waitFor(() => warnings.length > 0, 'a logged failure');
      proxy.down = false;
      await waitFor(() => owners.has(someone.toLowerCase()), 'the transfer after the outage');
      assert.equal(await holderBalance(database.db, token('COW'), someone, chainId), 1n);

      // an abort ends the run (a hang here fails the test by its timeout)
      controller.abort();
      await running;
    } finally {
      controller.abort();
      await proxy.close();
    }
  });

  it('indexes 200 transfers over 60 blocks, in several ranges, exactly (throughput: npm run bench indexer)', async () => {
    const chainId = 41007;
    const usdc = token('USDC');
    const transfers = 200;
    const recipients = Array.from({ length: transfers }, fresh);
    await chain.sendAndWait(recipients.map((to, i) => ({ from: trader(i % 2), to: usdc, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, BigInt(i + 1)] }), gas: 60_000n })));
    await chain.mine(60);
    const head = await chain.blockNumber();

    const indexer = newIndexer(database.db, { chainId, startBlock: 0, blockRange: 16 });
    await indexer.indexTo(head);
    const { logs, ranges } = indexer.stats;
    assert.ok(logs >= transfers, `${logs} logs`);
    assert.ok(ranges > 1, `${ranges} ranges`);
    await assertHolderBalancesMatchChain(database.db, usdc, recipients, chainId);
  });
});

function settlementAddress(): Address {
  return deployment().contracts.settlement;
}

async function holderBalance(db: Kysely<DB>, tokenAddress: Address, holder: Address, chainId = 31337): Promise<bigint | null> {
  const row = await db.selectFrom('token_holder_balances').select('balance').where('chain_id', '=', chainId).where('token', '=', toBytes(tokenAddress)).where('holder', '=', toBytes(holder)).executeTakeFirst();
  return row ? fromNumeric(row.balance) : null;
}

async function holderCount(db: Kysely<DB>, tokenAddress: Address, chainId = 31337): Promise<number> {
  const row = await db.selectFrom('token_holder_balances').select((eb) => eb.fn.countAll<number>().as('n')).where('chain_id', '=', chainId).where('token', '=', toBytes(tokenAddress)).executeTakeFirstOrThrow();
  return Number(row.n);
}
