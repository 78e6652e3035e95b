// The eth-flow refunder with production's selection rules, on a real devnet and PGlite: orders placed with the
// contract's createOrder, indexed by the real indexer and priced into orders; after they expire, only the one that
// production would refund (a limit ≥ 1.9 % below its quote, valid > 2 min, not partially fillable, with a quote) is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWalletClient, http, parseEther, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createChainClient, type ChainClient } from '../chain/client.js';
import { findFreePort, startDevnet, type Devnet } from '../chain/devnet/index.js';
import { Indexer } from '../chain/indexer/indexer.js';
import { openDatabase, type Database } from '../db/connection.js';
import { OrderBookError } from '../protocol/order-book-error.js';
import { EthFlowIngest } from '../orderbook/orders/ethflow-ingest.js';
import { OrderRepository } from '../orderbook/orders/order-repository.js';
import { ETHFLOW_ABI, ethFlowOrderUid, orderDomain, type EthFlowOrderData } from '../protocol/index.js';
import { EthFlowRefunder } from './ethflow-refunder.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const INVALIDATED = '0xffffffffffffffffffffffffffffffffffffffff';

describe('eth-flow refunder, production rules', () => {
  let devnet: Devnet;
  let database: Database;
  let client: ChainClient;
  before(async () => {
    devnet = await startDevnet({ dataDir: null, port: await findFreePort(), blockTime: 0, activity: false, historyHours: 0 });
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    client = createChainClient({ chainId: 31337, rpcUrl: devnet.rpcUrl, timeoutMs: 20_000 });
  });
  after(async () => {
    await devnet?.stop();
    await database?.close();
  });

  it('refunds only what production would', async () => {
    const { contracts, tokens, accounts } = devnet.deployment;
    const ethFlow = contracts.ethFlow.toLowerCase() as Address;
    const usdc = tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
    const unquoted = tokens.find((t) => t.symbol === 'DAI')!.address.toLowerCase() as Address;
    const [alice, bob] = accounts.filter((a) => a.role === 'trader').map((a) => privateKeyToAccount(a.privateKey));
    const wallet = createWalletClient({ account: alice!, chain: client.chain, transport: http(devnet.rpcUrl) });
    // the deployment's blocks are in the past: a block now gives the chain's present
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    const now = Number((await client.getBlock()).timestamp);
    const base = { buyToken: usdc, receiver: alice!.address, sellAmount: parseEther('1'), appData: `0x${'00'.repeat(32)}` as Hex, feeAmount: 0n, partiallyFillable: false, quoteId: 0n };
    // the quoter below quotes 1000 for every order's sell amount
    const orders: Record<string, EthFlowOrderData> = {
      refundable: { ...base, buyAmount: 900n, validTo: now + 300 },
      nearMarket: { ...base, buyAmount: 990n, validTo: now + 300 },
      shortLived: { ...base, buyAmount: 901n, validTo: now + 100 },
      partial: { ...base, buyAmount: 902n, validTo: now + 300, partiallyFillable: true },
      noQuote: { ...base, buyToken: unquoted, buyAmount: 903n, validTo: now + 300 },
    };
    for (const order of Object.values(orders)) {
      const hash = await wallet.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value: order.sellAmount, chain: client.chain, account: alice! });
      assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
    }

    const indexer = new Indexer({ chainId: 31337, client, db: database.db, settlement: contracts.settlement, ethFlows: [ethFlow], logger: quiet });
    await indexer.indexTo(await client.getBlockNumber());
    const repo = new OrderRepository(database.db);
    const ingest = new EthFlowIngest({
      chainId: 31337, db: database.db, orders: repo, settlement: contracts.settlement, logger: quiet,
      quoter: {
        async quoteForOrder(r) {
          if (r.buyToken === unquoted) throw new OrderBookError('NoLiquidity', 'no route');
          return { id: 1, sellAmount: r.sellAmount, buyAmount: 1000n, feeAmount: 0n, gasAmount: 1n, gasPrice: 1n, sellTokenPrice: 1, solver: 'test', verified: false };
        },
      },
    });
    await ingest.ingestPending();
    const uid = (o: EthFlowOrderData) => ethFlowOrderUid(o, { ethFlow, wrappedNative: contracts.weth, domain: orderDomain(31337) });
    for (const o of Object.values(orders)) assert.ok(await repo.get(31337, uid(o)), 'every order is in the book');

    const refunder = new EthFlowRefunder({ chainId: 31337, db: database.db, client, rpcUrl: devnet.rpcUrl, account: bob!, contracts: [ethFlow], mode: 'production', logger: quiet });
    // nothing has expired yet
    assert.deepEqual(await refunder.refundOnce(), []);
    await client.request({ method: 'evm_increaseTime' as never, params: [301] as never });
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    const sent = await refunder.refundOnce();
    assert.equal(sent.length, 1);
    const owners = Object.fromEntries(
      await Promise.all(
        Object.entries(orders).map(async ([name, o]) => {
          const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid(o).slice(0, 66) as Hex] });
          return [name, owner.toLowerCase()];
        }),
      ),
    );
    const me = alice!.address.toLowerCase();
    assert.deepEqual(owners, { refundable: INVALIDATED, nearMarket: me, shortLived: me, partial: me, noQuote: me });

    // indexed, the refund is the order's refundTxHash and the refunder does not send it again
    await indexer.indexTo(await client.getBlockNumber());
    assert.equal((await repo.get(31337, uid(orders.refundable!)))?.ethflow?.refundTxHash, sent[0]);
    assert.deepEqual(await refunder.refundOnce(), []);
  });

  it('a refund the node drops (a reorg) ends the wait at once and is sent again at the next pass, without a backoff', async () => {
    const { contracts, tokens, accounts } = devnet.deployment;
    const ethFlow = contracts.ethFlow.toLowerCase() as Address;
    const usdc = tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
    const [alice, bob] = accounts.filter((a) => a.role === 'trader').map((a) => privateKeyToAccount(a.privateKey));
    const rpc = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never }) as Promise<unknown>;
    const wallet = createWalletClient({ account: alice!, chain: client.chain, transport: http(devnet.rpcUrl) });
    await rpc('evm_mine');
    const now = Number((await client.getBlock()).timestamp);
    const order: EthFlowOrderData = { buyToken: usdc, receiver: alice!.address, sellAmount: parseEther('0.5'), buyAmount: 800n, appData: `0x${'00'.repeat(32)}`, feeAmount: 0n, validTo: now + 300, partiallyFillable: false, quoteId: 0n };
    const created = await wallet.writeContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'createOrder', args: [order], value: order.sellAmount, chain: client.chain, account: alice! });
    assert.equal((await client.waitForTransactionReceipt({ hash: created })).status, 'success');
    const indexer = new Indexer({ chainId: 31337, client, db: database.db, settlement: contracts.settlement, ethFlows: [ethFlow], logger: quiet });
    await indexer.indexTo(await client.getBlockNumber());
    const repo = new OrderRepository(database.db);
    await new EthFlowIngest({
      chainId: 31337, db: database.db, orders: repo, settlement: contracts.settlement, logger: quiet,
      quoter: { quoteForOrder: async (r) => ({ id: 2, sellAmount: r.sellAmount, buyAmount: 1000n, feeAmount: 0n, gasAmount: 1n, gasPrice: 1n, sellTokenPrice: 1, solver: 'test', verified: false }) },
    }).ingestPending();
    await rpc('evm_increaseTime', [301]);
    await rpc('evm_mine');

    // a refunder that would wait 30 s for a receipt; mining is off, so its refund stays pending until dropped
    const refunder = new EthFlowRefunder({ chainId: 31337, db: database.db, client, rpcUrl: devnet.rpcUrl, account: bob!, contracts: [ethFlow], mode: 'production', logger: quiet, timeoutMs: 30_000 });
    await rpc('evm_setAutomine', [false]);
    try {
      const pass = refunder.refundOnce();
      let pending: Hex[] = [];
      for (let i = 0; i < 200 && pending.length === 0; i++) {
        const pool = (await rpc('txpool_content')) as { pending: Record<string, Record<string, { hash: Hex }>> };
        pending = Object.values(pool.pending).flatMap((byNonce) => Object.values(byNonce).map((tx) => tx.hash));
        if (pending.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(pending.length, 1, 'the refund is pending');
      await rpc('anvil_dropTransaction', [pending[0]]);
      assert.deepEqual(await pass, [], 'the dropped refund is not reported as sent');
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    const again = await refunder.refundOnce();
    assert.equal(again.length, 1, 'sent again at the next pass');
    const uid = ethFlowOrderUid(order, { ethFlow, wrappedNative: contracts.weth, domain: orderDomain(31337) });
    const [owner] = await client.readContract({ address: ethFlow, abi: ETHFLOW_ABI, functionName: 'orders', args: [uid.slice(0, 66) as Hex] });
    assert.equal(owner.toLowerCase(), INVALIDATED);
  });
});
