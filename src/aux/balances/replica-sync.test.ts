import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../../chain/client.js';
import { ChainReader } from '../../chain/reader.js';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { openSharedBackend, type SharedBackend } from '../../infra/shared-backend.js';
import { deleteNamespace, ensureLocalRedis, namespaceKeys, startPrivateRedis, uniqueNamespace } from '../../infra/test-redis.js';
import { BalanceStream, type BalanceWatch, type ChainReadEvent } from './balance-stream.js';
import { skipUnless } from '../../../test/fixtures/required-services.js';

const redisSkip = await skipUnless('redis');
const redisServerSkip = redisSkip || (await skipUnless('redis-server'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const freshUser = (): Address => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address;

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

let chain: TestDevnet;
let redisUrl: string;
let token: (symbol: string) => Address;
let relayer: Address;
const cleanups: Array<() => Promise<void>> = [];
const namespaces: string[] = [];

interface Replica {
  id: string;
  stream: BalanceStream;
  backend: SharedBackend;
  reads: Array<ChainReadEvent & { replica: string }>;
}

/** A "replica": its own chain client and block feed, its own Redis connections, one BalanceStream. */
async function replica(id: string, url: string, namespace: string, reads: Array<ChainReadEvent & { replica: string }>): Promise<Replica> {
  const backend = await openSharedBackend({ redisUrl: url, namespace, connectWaitMs: 500 });
  const reader = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 100 });
  const stream = new BalanceStream({
    chainId: 31337,
    reader,
    vaultRelayer: relayer,
    replicas: { coordination: backend.coordination, pubsub: backend.pubsub, replicaId: id, heartbeatMs: 300 },
    onRead: (e) => reads.push({ ...e, replica: id }),
  });
  cleanups.push(async () => {
    await stream.close();
    await backend.close();
  });
  return { id, stream, backend, reads };
}



/** Block reads per block number (both replicas together) from index `from` on. */
type ReplicaRead = ChainReadEvent & { replica: string };

function readsPerBlock(reads: ReplicaRead[], from: number): Map<bigint, ReplicaRead[]> {
  const map = new Map<bigint, ReplicaRead[]>();
  for (const r of reads.slice(from)) {
    if (r.kind !== 'block' || !r.ok) continue;
    map.set(r.block, [...(map.get(r.block) ?? []), r]);
  }
  return map;
}

before(async () => {
  if (redisSkip) return;
  [chain, redisUrl] = await Promise.all([startTestDevnet({ blockTime: 1 }), ensureLocalRedis()]);
  const bySymbol = new Map(chain.devnet.deployment.tokens.map((t) => [t.symbol, t.address.toLowerCase() as Address]));
  token = (symbol) => bySymbol.get(symbol)!;
  relayer = chain.devnet.deployment.contracts.vaultRelayer.toLowerCase() as Address;
});

after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  if (redisUrl) for (const ns of namespaces) await deleteNamespace(redisUrl, ns);
  await chain?.stop();
});

describe('BalanceStream replicas on Redis', { skip: redisSkip }, () => {
  it('two replicas watching the same pair: one chain read per block in total, and both replicas’ watchers get the change', async () => {
    const ns = uniqueNamespace('balances');
    namespaces.push(ns);
    const reads: Array<ChainReadEvent & { replica: string }> = [];
    const a = await replica('A', redisUrl, ns, reads);
    const b = await replica('B', redisUrl, ns, reads);
    const user = freshUser();
    let changesA = 0;
    let changesB = 0;
    const wA = await a.stream.watch({ user, tokens: [token('USDC'), token('DAI')], onChange: () => changesA++ });
    const wB = await b.stream.watch({ user, tokens: [token('USDC'), token('WBTC')], onChange: () => changesB++ });

    // registration is asynchronous: let both replicas see a few shared rounds
    await until('a follower round on some replica', () => a.stream.stats().rounds.follower + b.stream.stats().rounds.follower >= 2);
    const from = reads.length;
    await chain.blocks(5);
    await sleep(300);
    const perBlock = readsPerBlock(reads, from);
    assert.ok(perBlock.size >= 4, `rounds ran for ${perBlock.size} blocks`);
    for (const [block, list] of perBlock) {
      assert.equal(list.length, 1, `block ${block}: read ${list.length} times (${list.map((r) => r.replica).join(', ')})`);
      assert.equal(list[0].pairs, 3, 'the leader reads the union of both replicas’ pairs');
    }
    const keys = await namespaceKeys(redisUrl, ns);
    assert.ok(keys.includes(`${ns}balances:31337:pairs:A`) && keys.includes(`${ns}balances:31337:pairs:B`), keys.join(' '));

    const amount = await chain.mint(user, 'USDC', '42');
    await until('both replicas’ watchers hear about USDC', () => changesA === 1 && changesB === 1);
    assert.equal(wA.value(token('USDC'))!.balance, amount);
    assert.equal(wB.value(token('USDC'))!.balance, amount);

    const btc = await chain.mint(user, 'WBTC', '0.1');
    await until('B hears about WBTC', () => changesB === 2);
    assert.equal(wB.value(token('WBTC'))!.balance, btc);
    await chain.blocks(1);
    assert.equal(changesA, 1, 'A does not watch WBTC');
    const perBlockAfter = readsPerBlock(reads, from);
    assert.ok([...perBlockAfter.values()].every((list) => list.length === 1), 'still one read per block');

    // a dead replica (registered, then silent) is read for until its registration expires
    const ghost = freshUser();
    await a.backend.coordination.announce('balances:31337:replicas', 'ghost', 1_200);
    await a.backend.coordination.setAdd('balances:31337:pairs:ghost', [`${ghost}:${token('COW')}`], 1_200);
    const ghostFrom = reads.length;
    await until('the ghost’s pair is read', () => reads.slice(ghostFrom).some((r) => r.kind === 'block' && r.pairs === 4));
    await sleep(1_500);
    const afterExpiry = reads.length;
    await chain.blocks(2);
    const late = reads.slice(afterExpiry).filter((r) => r.kind === 'block');
    assert.ok(late.length > 0 && late.every((r) => r.pairs === 3), 'the expired replica’s pairs are no longer read');

    // the last watchers leave: tracking and registrations disappear
    wA.close();
    wB.close();
    assert.equal(a.stream.trackedTokens(user), null);
    assert.equal(b.stream.trackedTokens(user), null);
    await until('registrations removed', async () => (await namespaceKeys(redisUrl, ns)).every((k) => !k.includes(':pairs:')));
    assert.deepEqual(await a.backend.coordination.liveMembers('balances:31337:replicas'), []);
    const n = reads.length;
    await chain.blocks(2);
    assert.equal(reads.length, n, 'no reads without watchers');
  });

  it('Redis down: every replica reads for itself and changes still arrive; one read per block again once Redis is back', { skip: redisServerSkip }, async () => {
    const server = await startPrivateRedis();
    cleanups.push(() => server.stop());
    const ns = uniqueNamespace('balances-outage');
    const reads: Array<ChainReadEvent & { replica: string }> = [];
    const a = await replica('A', server.url, ns, reads);
    const b = await replica('B', server.url, ns, reads);
    const user = freshUser();
    let changesA = 0;
    let changesB = 0;
    const wA: BalanceWatch = await a.stream.watch({ user, tokens: [token('USDC')], onChange: () => changesA++ });
    const wB: BalanceWatch = await b.stream.watch({ user, tokens: [token('USDC')], onChange: () => changesB++ });
    await until('shared rounds', () => a.stream.stats().rounds.follower + b.stream.stats().rounds.follower >= 2);

    await server.stop();
    const outageFrom = reads.length;
    const first = await chain.mint(user, 'USDC', '5');
    await until('both hear about the mint during the outage', () => changesA === 1 && changesB === 1);
    assert.equal(wA.value(token('USDC'))!.balance, first);
    assert.equal(wB.value(token('USDC'))!.balance, first);
    assert.ok(a.stream.stats().rounds.local > 0 && b.stream.stats().rounds.local > 0, 'both fell back to local reads');
    assert.ok(reads.slice(outageFrom).some((r) => r.replica === 'A') && reads.slice(outageFrom).some((r) => r.replica === 'B'));

    await server.start();
    const followersBefore = a.stream.stats().rounds.follower + b.stream.stats().rounds.follower;
    await until('shared rounds again', () => a.stream.stats().rounds.follower + b.stream.stats().rounds.follower >= followersBefore + 2, 30_000);
    const from = reads.length;
    await chain.blocks(3);
    await sleep(300);
    const perBlock = readsPerBlock(reads, from);
    assert.ok(perBlock.size >= 2);
    for (const [block, list] of perBlock) assert.equal(list.length, 1, `block ${block} read by ${list.map((r) => r.replica).join(', ')}`);

    const second = await chain.mint(user, 'USDC', '6');
    await until('both hear about the mint after the outage', () => changesA === 2 && changesB === 2);
    assert.equal(wA.value(token('USDC'))!.balance, first + second);
    assert.equal(wB.value(token('USDC'))!.balance, first + second);
    wA.close();
    wB.close();
  });
});
