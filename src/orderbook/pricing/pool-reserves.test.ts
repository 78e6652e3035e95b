import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContractFunctionExecutionError, ContractFunctionRevertedError, encodeFunctionData, http, parseAbi, createPublicClient, type Address } from 'viem';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { createChainClient, type ChainClient } from '../../chain/client.js';
import { BlockFeed } from '../../chain/block-feed.js';
import { uniswapV2RouterAbi } from '../../chain/devnet/abis.js';
import { waitFor } from '../../../test/fixtures/wait-for.js';
import { PoolReserves, amountsIn, amountsOut, pairKey } from './pool-reserves.js';
import { UniswapV2Estimator } from './uniswap-v2-estimator.js';

const ROUTER = parseAbi(['function getAmountsIn(uint256 amountOut, address[] path) view returns (uint256[] amounts)']);
const PAIR_SYNC = parseAbi(['function sync()']);
const FACTORY = parseAbi(['function getPair(address, address) view returns (address)']);

describe('pool reserves read once per block, routes in memory (issue 15, point 7)', () => {
  let chain: TestDevnet;
  let client: ChainClient;
  let feed: BlockFeed;
  let stopFeed: () => void;
  let calls = 0;
  let weth: Address;
  let usdc: Address;
  let dai: Address;
  let router: Address;
  let factory: Address;

  before(async () => {
    chain = await startTestDevnet();
    const d = chain.devnet.deployment;
    [weth, usdc, dai] = d.tokens.slice(0, 3).map((t) => t.address.toLowerCase() as Address) as [Address, Address, Address];
    router = d.contracts.ammRouter;
    factory = d.contracts.ammFactory;
    client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 30_000 });
    feed = new BlockFeed(client, { pollingIntervalMs: 100 });
    stopFeed = feed.subscribe(() => {});
    await waitFor('the first head', () => feed.latest);
  });
  after(async () => {
    stopFeed?.();
    await chain?.stop();
  });

  /** a client that counts the eth_calls it sends */
  const countingClient = () =>
    Object.assign(createPublicClient({ chain: client.chain, transport: http(chain.rpcUrl, { onFetchRequest: () => void calls++ }) }), {}) as unknown as ChainClient;

  it('gives the router’s own amounts for direct and two-hop paths, both kinds, and null where the router reverts', async () => {
    const pools = new PoolReserves({ client, factory, blockFeed: null });
    const paths: Address[][] = [[weth, usdc], [usdc, weth], [usdc, weth, dai], [dai, weth, usdc]];
    const snapshot = await pools.reservesOf(paths.flatMap((p) => p.slice(1).map((t, i) => [p[i]!, t] as [Address, Address])));
    for (const path of paths) {
      for (const amount of [1n, 10n ** 6n, 10n ** 18n, 123_456_789n * 10n ** 9n]) {
        // a hop whose input rounds to nothing reverts in the router (INSUFFICIENT_INPUT_AMOUNT): null in memory
        const onChain = await client.readContract({ address: router, abi: uniswapV2RouterAbi, functionName: 'getAmountsOut', args: [amount, path] }).then((a) => [...a], () => null);
        assert.deepEqual(amountsOut(amount, path, snapshot), onChain, `getAmountsOut ${amount} ${path.join('>')}`);
        // asking for more than a pool holds reverts in the router: no route in memory either
        const needIn = await client.readContract({ address: router, abi: ROUTER, functionName: 'getAmountsIn', args: [amount, path] }).then((a) => [...a], () => null);
        assert.deepEqual(amountsIn(amount, path, snapshot), needIn, `getAmountsIn ${amount} ${path.join('>')}`);
      }
    }
    // more than the pool holds: the router reverts, the in-memory math says no route
    const r = snapshot.get(pairKey(weth, usdc))!;
    const usdcReserve = r.token0 === usdc ? r.reserve0 : r.reserve1;
    await assert.rejects(client.readContract({ address: router, abi: ROUTER, functionName: 'getAmountsIn', args: [usdcReserve, [weth, usdc]] }), (err) => err instanceof ContractFunctionExecutionError && err.cause instanceof ContractFunctionRevertedError);
    assert.equal(amountsIn(usdcReserve, [weth, usdc], snapshot), null);
    assert.equal(amountsOut(0n, [weth, usdc], snapshot), null);
    // a pair that does not exist
    const none = '0x000000000000000000000000000000000000dead' as Address;
    const missing = await pools.reservesOf([[weth, none]]);
    assert.equal(missing.get(pairKey(weth, none)), null);
    assert.equal(amountsOut(10n ** 18n, [weth, none], missing), null);
  });

  it('reads the pools once per head: quotes in the same block send no request, a new block’s change is seen', async () => {
    const counted = countingClient();
    const pools = new PoolReserves({ client: counted, factory, blockFeed: feed });
    const estimator = new UniswapV2Estimator({ client: counted as never, router, connectors: [weth, dai], reserves: pools });
    // hold the head still: no blocks while we count
    await chain.rpc('evm_setIntervalMining', [0]);
    const head = await chain.blockNumber();
    await waitFor('the feed at the head', () => feed.latest && Number(feed.latest.number) === head);
    const first = await estimator.estimate({ sellToken: weth, buyToken: usdc, kind: 'sell', amount: 10n ** 18n });
    const before = calls;
    for (let i = 0; i < 5; i++) {
      const again = await estimator.estimate({ sellToken: weth, buyToken: usdc, kind: 'sell', amount: 10n ** 18n });
      assert.equal(again.outAmount, first.outAmount);
    }
    await estimator.estimate({ sellToken: usdc, buyToken: weth, kind: 'buy', amount: 10n ** 17n });
    assert.equal(calls, before, 'no request while the head stays');
    const onChain = await client.readContract({ address: router, abi: uniswapV2RouterAbi, functionName: 'getAmountsOut', args: [10n ** 18n, [weth, usdc]] });
    assert.ok(first.outAmount >= onChain[1]!, 'the best route is at least the direct one');

    // donate USDC to the WETH/USDC pool and sync: a new block with new reserves
    await chain.rpc('evm_setIntervalMining', [1]);
    const pair = await client.readContract({ address: factory, abi: FACTORY, functionName: 'getPair', args: [weth, usdc] });
    await chain.mint(pair, 'USDC', '300000');
    const d = chain.devnet.deployment;
    await chain.sendAndWait([{ from: d.accounts[0]!.address, to: pair, data: encodeFunctionData({ abi: PAIR_SYNC, functionName: 'sync' }) }]);
    const synced = await chain.blockNumber();
    await waitFor('the feed at the sync block', () => feed.latest && Number(feed.latest.number) >= synced);
    const after = await estimator.estimate({ sellToken: weth, buyToken: usdc, kind: 'sell', amount: 10n ** 18n });
    assert.ok(after.outAmount > first.outAmount, `more USDC in the pool gives more USDC per WETH (${after.outAmount} > ${first.outAmount})`);
    assert.ok(calls > before, 'the new block was read');
  });
});
