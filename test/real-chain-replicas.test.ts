/**
 * Issue 14, point 20: the production shape proper. Two replicas (real entry point, child processes) against one
 * chain-100 node (fixtures/real-chain.ts), one PostgreSQL and one Redis. One replica leads the chain loops: one
 * auction per block and no order settled twice; orders posted to either are read on both; a balance stream
 * served by either sees each change once; when the leader is killed (SIGKILL) the other takes over and settles.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { encodeFunctionData, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createTestPostgres, type TestPostgres } from './fixtures/databases.js';
import { skipUnless, TEST_REDIS_URL } from './fixtures/required-services.js';
import { deleteNamespace } from '../src/infra/test-redis.js';
import { waitFor } from './fixtures/wait-for.js';
import { openSse, type SseClient } from '../src/aux/balances/test-sse-client.js';
import { devnetTokenAbi } from '../src/chain/devnet/abis.js';
import { connectSdk, ensureBuilt, GNOSIS_CHAIN_ID, placeOrder, query, startGnosisStandIn, startNode, type Account, type GnosisStandIn, type NodeProcess } from './fixtures/real-chain.js';

const skip = (await skipUnless('postgres')) || (await skipUnless('redis'));
const LEADS = /batchbook:loops:100: this replica leads/;

describe('production shape: two replicas, one chain-100 node, one PostgreSQL, one Redis', { skip }, () => {
  let chain: GnosisStandIn;
  let db: TestPostgres;
  let a: NodeProcess;
  let b: NodeProcess;
  let trader: Account;
  let dai: Address;
  let usdc: Address;
  const prefix = `bbtest:${randomBytes(4).toString('hex')}:`;
  const streams: SseClient[] = [];

  before(async () => {
    await ensureBuilt();
    [chain, db] = await Promise.all([startGnosisStandIn(), createTestPostgres()]);
    trader = privateKeyToAccount(chain.account('trader').privateKey);
    dai = chain.token('DAI');
    usdc = chain.token('USDC');
    const env = {
      RPC_URL_100: chain.rpcUrl, DEVNET: 'false', DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix,
      SOLVER_PRIVATE_KEY: chain.account('solver').privateKey,
    };
    // both start at once against the same empty database
    [a, b] = await Promise.all([startNode(env), startNode(env)]);
  });
  after(async () => {
    for (const s of streams) s.close();
    await Promise.all([a?.kill(), b?.kill()]);
    await chain?.stop();
    await db?.drop();
    if (!skip) await deleteNamespace(TEST_REDIS_URL, prefix);
  });

  const leaderOf = () => waitFor('exactly one replica to lead the chain loops', () => {
    const leading = [a, b].filter((n) => LEADS.test(n.output()));
    return leading.length === 1 ? leading[0]! : null;
  }, 60_000, 100);

  /** Blocks with more than one competition (every auction with a solution has one; only the latest auction is kept). */
  /** blocks with more auctions than one of their own plus at most one extra started by orders placed on the leader */
  async function auctionsPerBlock(): Promise<Array<{ block: number; n: number }>> {
    const all = await query<{ n: number }>(db.url, 'select count(*)::int as n from solver_competitions where chain_id = $1', [GNOSIS_CHAIN_ID]);
    assert.ok(all[0]!.n > 0, 'there are competitions to look at');
    return query<{ block: number; n: number }>(db.url, 'select start_block as block, count(*)::int as n from solver_competitions where chain_id = $1 group by start_block having count(*) > 2', [GNOSIS_CHAIN_ID]);
  }

  const deployer = () => chain.deployment.accounts.find((x) => x.role === 'deployer')!.address;
  const mintDai = async (user: Address, amount: bigint) => {
    await chain.rpc.request('eth_sendTransaction', [{ from: deployer(), to: dai, data: encodeFunctionData({ abi: devnetTokenAbi, functionName: 'mint', args: [user, amount] }) }]);
  };
  const freshUser = () => privateKeyToAccount(`0x${randomBytes(32).toString('hex')}` as Hex).address.toLowerCase() as Address;
  const balanceIn = (data: string) => (JSON.parse(data) as Array<{ balance: string }>)[0]!.balance;
  const daiStream = (node: NodeProcess, user: Address) => openSse(`${node.base}/${GNOSIS_CHAIN_ID}/accounts/${user}/balances/sse?tokens=${dai}`);

  it('one replica leads; orders posted to either are read on both and settled once, one auction per block', async () => {
    const leader = await leaderOf();
    const follower = leader === a ? b : a;
    assert.doesNotMatch(follower.output(), LEADS);
    const onA = await placeOrder(connectSdk(a, chain, trader), trader, dai, usdc, 100n * 10n ** 18n);
    const onB = await placeOrder(connectSdk(b, chain, trader), trader, usdc, dai, 80n * 10n ** 6n);
    for (const node of [a, b]) {
      const api = connectSdk(node, chain, trader);
      for (const uid of [onA.uid, onB.uid]) assert.equal((await api.getOrder(uid)).uid, uid);
    }
    const api = connectSdk(follower, chain, trader);
    for (const uid of [onA.uid, onB.uid]) {
      await waitFor(`order ${uid.slice(0, 10)} to be fulfilled`, async () => (await api.getOrder(uid)).status === 'fulfilled', 120_000, 250);
    }
    for (const uid of [onA.uid, onB.uid]) {
      assert.equal((await api.getTrades({ orderUid: uid })).length, 1, 'settled once');
      const onChain = await query<{ n: number }>(db.url, 'select count(*)::int as n from trades where chain_id = $1 and order_uid = $2', [GNOSIS_CHAIN_ID, Buffer.from(uid.slice(2), 'hex')]);
      assert.equal(onChain[0]!.n, 1, 'one Trade event on chain');
    }
    const submitted = await query<{ n: number }>(db.url, "select count(*)::int as n from competition_settlements where chain_id = $1 and tx_hash is not null", [GNOSIS_CHAIN_ID]);
    assert.notEqual(submitted[0]!.n, 0, 'the leader’s driver submitted');
    assert.deepEqual(await auctionsPerBlock(), [], 'no block has more than its auction and one extra');
  });

  it('a balance stream served by either replica sees each change once', async () => {
    const user = freshUser();
    const [sa, sb] = await Promise.all([daiStream(a, user), daiStream(b, user)]);
    streams.push(sa, sb);
    assert.equal(sa.status, 200);
    assert.equal(sb.status, 200);
    for (const s of [sa, sb]) assert.equal(balanceIn((await s.next((e) => e.event === 'message', 60_000)).data), '0');
    const one = parseUnits('1', 18);
    await mintDai(user, one);
    for (const s of [sa, sb]) assert.equal(balanceIn((await s.next((e) => e.event === 'message', 60_000)).data), one.toString());
    await mintDai(user, one);
    for (const s of [sa, sb]) assert.equal(balanceIn((await s.next((e) => e.event === 'message', 60_000)).data), (2n * one).toString());
    for (const s of [sa, sb]) {
      const values = s.events.filter((e) => e.event === 'message').map((e) => balanceIn(e.data));
      assert.deepEqual(values, ['0', one.toString(), (2n * one).toString()], 'each change once, in order');
    }
  });

  it('when the leader is killed, the other replica takes over within seconds and settles', async (t) => {
    const leader = await leaderOf();
    const survivor = leader === a ? b : a;
    const user = freshUser();
    const stream = await daiStream(survivor, user);
    streams.push(stream);
    assert.equal(balanceIn((await stream.next((e) => e.event === 'message', 60_000)).data), '0');
    const killed = Date.now();
    await leader.kill();
    const killedAt = await chain.blockNumber();
    await waitFor('the surviving replica to lead', () => LEADS.test(survivor.output()), 60_000, 100);
    t.diagnostic(`takeover after ${((Date.now() - killed) / 1000).toFixed(1)} s (the standby retries the lock every 5 s)`);
    await waitFor('an auction built by the new leader', async () => {
      const res = await fetch(`${survivor.base}/xdai/api/v1/auction`);
      const body = res.status === 200 ? ((await res.json()) as { block: number }) : null;
      return body !== null && body.block > killedAt;
    }, 90_000, 250);
    const api = connectSdk(survivor, chain, trader);
    const { uid } = await placeOrder(api, trader, dai, usdc, 150n * 10n ** 18n);
    await waitFor('the order to be fulfilled by the new leader', async () => (await api.getOrder(uid)).status === 'fulfilled', 120_000, 250);
    assert.equal((await api.getTrades({ orderUid: uid })).length, 1);
    assert.deepEqual(await auctionsPerBlock(), [], 'no block has more than its auction and one extra across the handover');
    // the survivor's balance stream goes on without the other replica: the change arrives once
    await mintDai(user, 5n);
    assert.equal(balanceIn((await stream.next((e) => e.event === 'message', 60_000)).data), '5');
    await mintDai(user, 5n);
    assert.equal(balanceIn((await stream.next((e) => e.event === 'message', 60_000)).data), '10');
    assert.deepEqual(stream.events.filter((e) => e.event === 'message').map((e) => balanceIn(e.data)), ['0', '5', '10']);
  });
});
