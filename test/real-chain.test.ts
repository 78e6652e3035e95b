/**
 * Issue 14, point 20: real-chain mode, exercised as an operator runs it. A separately started anvil with chain id 100
 * (the canonical contracts from our deployer, WXDAI and Honeyswap at Gnosis Chain's addresses: fixtures/real-chain.ts)
 * stands in for the external node; the node is the real entry point in a child process with `RPC_URL_100`,
 * `DEVNET=false` and real PostgreSQL. The official SDK quotes, signs with chain 100's domain, posts, lists and cancels
 * on `/xdai/api/v1`; the indexer follows the head; auctions are built; the driver runs only with an allow-listed
 * `SOLVER_PRIVATE_KEY`, and then settles.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OrderSigningUtils, OrderBookApiError } from '@cowprotocol/cow-sdk';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { createTestPostgres, type TestPostgres } from './fixtures/databases.js';
import { skipUnless } from './fixtures/required-services.js';
import { waitFor } from './fixtures/wait-for.js';
import { connectSdk, ensureBuilt, GNOSIS_CHAIN_ID, placeOrder, query, startGnosisStandIn, startNode, type Account, type GnosisStandIn, type NodeProcess } from './fixtures/real-chain.js';

const skip = await skipUnless('postgres');

describe('real-chain mode: RPC_URL_100 against a separately started node, PostgreSQL, the official SDK', { skip }, () => {
  let chain: GnosisStandIn;
  let db: TestPostgres;
  let node: NodeProcess | null = null;
  let trader: Account;
  let dai: Address;
  let usdc: Address;
  const nodes: NodeProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    // one node at a time on the shared database (a node left running by a failed test would keep the leadership)
    for (const n of nodes) await n.kill();
    const n = await startNode({ RPC_URL_100: chain.rpcUrl, DEVNET: 'false', DATABASE_URL: db.url, ...env });
    nodes.push(n);
    return n;
  };

  before(async () => {
    await ensureBuilt();
    [chain, db] = await Promise.all([startGnosisStandIn(), createTestPostgres()]);
    trader = privateKeyToAccount(chain.account('trader').privateKey);
    dai = chain.token('DAI');
    usdc = chain.token('USDC');
  });
  after(async () => {
    for (const n of nodes) await n.kill();
    await chain?.stop();
    await db?.drop();
  });

  it('serves chain 100 under its network name, with no devnet and no devnet routes', async () => {
    node = await start();
    assert.match(node.output(), /order book \(xdai\): http:\/\/127\.0\.0\.1:\d+\/xdai\/api\/v1/);
    assert.doesNotMatch(node.output(), /devnet JSON-RPC/);
    const ready = await fetch(`${node.base}/readyz`);
    assert.equal(ready.status, 200);
    // a real network is indexed from the head: the settlement's events only, no token holders, no pools, no factory
    const { indexed } = (await ready.json()) as { indexed: Record<string, unknown> };
    assert.deepEqual(indexed, { xdai: { settlement: chain.deployment.contracts.settlement.toLowerCase(), holderTokens: [], pools: 0, factory: null } });
    assert.equal((await fetch(`${node.base}/devnet`)).status, 404);
    const version = await fetch(`${node.base}/xdai/api/v1/version`);
    assert.equal(version.status, 200);
  });

  it('the SDK quotes, signs with chain 100’s domain, posts, lists and cancels on /xdai/api/v1', async () => {
    const api = connectSdk(node!, chain, trader);
    const a = await placeOrder(api, trader, dai, usdc, 100n * 10n ** 18n);
    assert.equal(a.uid, a.expectedUid, 'the UID the SDK computes for chain 100');
    assert.ok(BigInt(a.quote.buyAmount) > 90n * 10n ** 6n, `about 100 USDC for 100 DAI through the Honeyswap pools, got ${a.quote.buyAmount}`);
    const stored = await api.getOrder(a.uid);
    assert.equal(stored.status, 'open');
    assert.equal(stored.owner, trader.address.toLowerCase());
    const b = await placeOrder(api, trader, usdc, dai, 50n * 10n ** 6n);
    const listed = (await api.getOrders({ owner: trader.address })).map((o) => o.uid);
    assert.ok(listed.includes(a.uid) && listed.includes(b.uid));
    assert.ok(listed.indexOf(b.uid) < listed.indexOf(a.uid), 'newest first');

    const sig = await OrderSigningUtils.signOrderCancellations([a.uid, b.uid], GNOSIS_CHAIN_ID as never, trader as never);
    await api.sendSignedOrderCancellations({ ...sig, orderUids: [a.uid, b.uid] } as never);
    for (const uid of [a.uid, b.uid]) assert.equal((await api.getOrder(uid)).status, 'cancelled');
    // a signature for another chain's domain is refused
    const c = await placeOrder(api, trader, dai, usdc, 20n * 10n ** 18n);
    const wrongChain = await OrderSigningUtils.signOrderCancellations([c.uid], 1 as never, trader as never);
    await assert.rejects(api.sendSignedOrderCancellations({ ...wrongChain, orderUids: [c.uid] } as never), (err: unknown) => err instanceof OrderBookApiError && err.response.status >= 400 && err.response.status < 500);
    assert.equal((await api.getOrder(c.uid)).status, 'open');
  });

  it('the indexer follows the head and auctions are built; without SOLVER_PRIVATE_KEY nothing is settled', async () => {
    const head = await chain.blockNumber();
    await waitFor('the indexer to pass the head seen now', async () => {
      const rows = await query<{ block_number: number }>(db.url, 'select block_number from indexer_checkpoints where chain_id = $1', [GNOSIS_CHAIN_ID]);
      return rows.length > 0 && rows.every((r) => r.block_number >= head);
    }, 90_000, 250);
    const open = (await connectSdk(node!, chain, trader).getOrders({ owner: trader.address })).filter((o) => o.status === 'open');
    assert.ok(open.length >= 1);
    // an auction built past that head holds every open order (a build that could not price a token in time leaves its
    // orders out as `missing_native_price` and the next one takes them: wait for one that holds them all)
    await waitFor('an auction built on a block past the head seen now, with every open order', async () => {
      const res = await fetch(`${node!.base}/xdai/api/v1/auction`);
      if (res.status !== 200) return null;
      const body = (await res.json()) as { id: number; block: number; orders: Array<{ uid: string }> };
      return body.block >= head && open.every((o) => body.orders.some((x) => x.uid === o.uid)) ? body : null;
    }, 90_000, 250);
    assert.match(node!.output(), /no solver account|SOLVER_PRIVATE_KEY/);
    const submissions = await query<{ n: string }>(db.url, 'select count(*) as n from competition_settlements where chain_id = $1', [GNOSIS_CHAIN_ID]);
    assert.equal(Number(submissions[0]!.n), 0, 'no settlement was submitted');
    await node!.stop();
  });

  it('a SOLVER_PRIVATE_KEY that is not on the allow-list: auctions run, the driver does not', async () => {
    const stranger = generatePrivateKey();
    node = await start({ SOLVER_PRIVATE_KEY: stranger });
    const head = await chain.blockNumber();
    await waitFor('the node to say the key is not an allow-listed solver', () => /not an allow-listed solver/.test(node!.output()), 60_000, 100);
    await waitFor('an auction with the open order, built by this node', async () => {
      const res = await fetch(`${node!.base}/xdai/api/v1/auction`);
      const body = res.status === 200 ? ((await res.json()) as { block: number; orders: unknown[] }) : null;
      return body !== null && body.block > head && body.orders.length > 0;
    }, 90_000, 250);
    const submissions = await query<{ n: string }>(db.url, 'select count(*) as n from competition_settlements where chain_id = $1', [GNOSIS_CHAIN_ID]);
    assert.equal(Number(submissions[0]!.n), 0, 'nothing was submitted');
    await node.stop();
  });

  it('with an allow-listed SOLVER_PRIVATE_KEY the driver settles the open order', async () => {
    node = await start({ SOLVER_PRIVATE_KEY: chain.account('solver').privateKey });
    const api = connectSdk(node, chain, trader);
    const { uid, order } = await placeOrder(api, trader, dai, usdc, 300n * 10n ** 18n);
    await waitFor('the order to be fulfilled on chain 100', async () => (await api.getOrder(uid)).status === 'fulfilled', 120_000, 250);
    const trades = await api.getTrades({ orderUid: uid });
    assert.equal(trades.length, 1);
    assert.ok(BigInt(trades[0]!.buyAmount) >= BigInt(order.buyAmount));
    const receipt = await chain.rpc.request<{ from: Hex; to: Hex; status: Hex }>('eth_getTransactionReceipt', [trades[0]!.txHash]);
    assert.equal(receipt.status, '0x1');
    assert.equal(receipt.from.toLowerCase(), chain.account('solver').address.toLowerCase(), 'sent from the configured solver');
    assert.equal(receipt.to.toLowerCase(), '0x9008d19f58aabd9ed0d60971565aa8510560ab41');
  });
});
