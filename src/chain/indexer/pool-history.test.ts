import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, parseAbi, parseAbiItem, type Address } from 'viem';
import { engines } from '../../../test/fixtures/databases.js';
import type { Database } from '../../db/connection.js';
import { fromNumeric, toHex } from '../../db/codec.js';
import { createChainClient, type ChainClient } from '../client.js';
import { startFaultyRpcProxy } from '../faulty-rpc-proxy.js';
import { startTestDevnet, type TestDevnet } from '../test-devnet.js';
import { historyStart, indexPoolHistory } from './pool-history.js';

const pairAbi = parseAbi(['function sync()']);
const syncEvent = parseAbiItem('event Sync(uint112 reserve0, uint112 reserve1)');
const quiet = { info: () => {} };

let chain: TestDevnet;
let client: ChainClient;
/** blocks of the three Syncs made on the USDC pool after the devnet's deployment */
const syncBlocks: number[] = [];
let toBlock: number;
let pools: Address[];

before(async () => {
  chain = await startTestDevnet();
  client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 20_000 });
  const { deployment } = chain.devnet;
  pools = deployment.pools.map((p) => p.address);
  const usdc = deployment.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase();
  const pool = deployment.pools.find((p) => p.token0.toLowerCase() === usdc || p.token1.toLowerCase() === usdc)!.address;
  const sender = deployment.accounts.find((a) => a.role === 'trader')!.address;
  // three new reserves of one pool, each in its own block: USDC sent to the pair, then sync()
  for (const amount of ['1000', '2000', '3000']) {
    await chain.mint(pool, 'USDC', amount);
    const [receipt] = await chain.sendAndWait([{ from: sender, to: pool, data: encodeFunctionData({ abi: pairAbi, functionName: 'sync' }) }]);
    assert.equal(receipt!.status, '0x1');
    syncBlocks.push(receipt!.blockNumber);
  }
  await chain.mine(3);
  toBlock = await chain.blockNumber();
});

after(async () => {
  await chain?.stop();
});

for (const fixture of await engines()) {
  describe(`pool history (fork mode's pre-fork Syncs) with ${fixture.engine}`, { skip: fixture.skip }, () => {
    let database: Database & { dispose(): Promise<void> };
    before(async () => {
      database = await fixture.open();
    });
    after(async () => {
      await database?.dispose();
    });

    const stored = async () =>
      (await database.db.selectFrom('amm_syncs').select(['pool', 'block_number', 'log_index', 'reserve0', 'reserve1', 'block_timestamp']).where('chain_id', '=', 31337).orderBy('block_number').orderBy('log_index').execute())
        .map((r) => ({ pool: toHex(r.pool), block: Number(r.block_number), logIndex: Number(r.log_index), reserve0: fromNumeric(r.reserve0), reserve1: fromNumeric(r.reserve1), at: new Date(r.block_timestamp).getTime() }));

    it('stores exactly the Syncs of the window (bounded by maxBlocks), read in small ranges, with their block times', async () => {
      const maxBlocks = toBlock - syncBlocks[1]! + 1;
      const result = await indexPoolHistory({ client, db: database.db, chainId: 31337, pools, toBlock, windowSeconds: 1e9, maxBlocks, blockRange: 2, logger: quiet });
      assert.deepEqual(result, { fromBlock: syncBlocks[1], toBlock, syncs: 2, swaps: 0 });

      const logs = await client.getLogs({ address: pools, event: syncEvent, fromBlock: BigInt(syncBlocks[1]!), toBlock: BigInt(toBlock) });
      assert.equal(logs.length, 2);
      const rows = await stored();
      assert.deepEqual(
        rows.map(({ at: _at, ...r }) => r),
        logs.map((l) => ({ pool: l.address.toLowerCase(), block: Number(l.blockNumber), logIndex: l.logIndex, reserve0: l.args.reserve0!, reserve1: l.args.reserve1! })),
      );
      for (const row of rows) {
        const block = await client.getBlock({ blockNumber: BigInt(row.block) });
        assert.equal(row.at, Number(block.timestamp) * 1000);
      }
      assert.ok(!rows.some((r) => r.block === syncBlocks[0]), 'the Sync before the window is not read');
    });

    it('is idempotent, and a window longer than the chain starts at block 0 (every Sync since the deployment)', async () => {
      const before = (await stored()).length;
      await indexPoolHistory({ client, db: database.db, chainId: 31337, pools, toBlock, windowSeconds: 1e9, maxBlocks: toBlock - syncBlocks[1]! + 1, logger: quiet });
      assert.equal((await stored()).length, before);

      const all = await indexPoolHistory({ client, db: database.db, chainId: 31337, pools, toBlock, windowSeconds: 1e9, logger: quiet });
      assert.equal(all.fromBlock, 0);
      const logs = await client.getLogs({ address: pools, event: syncEvent, fromBlock: 0n, toBlock: BigInt(toBlock) });
      assert.ok(logs.length >= pools.length + 3, 'addLiquidity Syncs and the three made here');
      assert.equal((await stored()).length, logs.length);
      assert.equal(all.syncs, logs.length);
    });

    it('halves its range while the node refuses it, and still stores every Sync of the window', async () => {
      const proxy = await startFaultyRpcProxy(chain.rpcUrl);
      try {
        proxy.maxLogRange = 3;
        const through = createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 20_000 });
        await database.db.deleteFrom('amm_syncs').where('chain_id', '=', 31337).execute();
        const result = await indexPoolHistory({ client: through, db: database.db, chainId: 31337, pools, toBlock, windowSeconds: 1e9, logger: quiet });
        assert.equal(result.fromBlock, 0);
        const logs = await client.getLogs({ address: pools, event: syncEvent, fromBlock: 0n, toBlock: BigInt(toBlock) });
        assert.equal(result.syncs, logs.length);
        assert.equal((await stored()).length, logs.length);
      } finally {
        await proxy.close();
      }
    });

    it('estimates the window from the recent block time and caps it at maxBlocks', async () => {
      const head = await client.getBlock({ blockNumber: BigInt(toBlock) });
      const from = await historyStart(client, toBlock, 5, 1_000);
      assert.ok(from > 0 && from <= toBlock, `from ${from}`);
      assert.ok(from >= toBlock - 1_000 + 1);
      assert.equal(await historyStart(client, toBlock, 1e9, 4), toBlock - 3);
      // the window's first block lies within the chain time asked for, give or take the average's error
      const first = await client.getBlock({ blockNumber: BigInt(from) });
      assert.ok(Number(head.timestamp) - Number(first.timestamp) <= 5 * 10, `${Number(head.timestamp) - Number(first.timestamp)} s for a 5 s window`);
    });
  });
}
