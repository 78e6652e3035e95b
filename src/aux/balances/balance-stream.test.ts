import { after, before, describe, it } from 'node:test';
import { httpStatus } from '../../chain/test-errors.js';
import assert from 'node:assert/strict';
import { createPublicClient, encodeFunctionData, http, maxUint256, parseAbi, parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../../chain/client.js';
import { erc20ReadAbi } from '../../chain/erc20-abi.js';
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../../chain/faulty-rpc-proxy.js';
import { ChainReader } from '../../chain/reader.js';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { NATIVE_TOKEN } from './balance-entry.js';
import { BalanceStream, StreamClosedError, type ChainReadEvent } from './balance-stream.js';
import { waitFor } from '../../../test/fixtures/wait-for.js';

const freshUser = (): Address => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address;

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  await waitFor(what, check, timeoutMs, 20);
}

let chain: TestDevnet;
let reader: ChainReader;
let plain: ReturnType<typeof createPublicClient>;
let token: (symbol: string) => Address;
let relayer: Address;
const streams: BalanceStream[] = [];

function newStream(options: { reader?: ChainReader; onRead?: (e: ChainReadEvent) => void; signal?: AbortSignal } = {}): BalanceStream {
  const stream = new BalanceStream({ chainId: 31337, reader: options.reader ?? reader, vaultRelayer: relayer, onRead: options.onRead, signal: options.signal });
  streams.push(stream);
  return stream;
}



before(async () => {
  chain = await startTestDevnet({ blockTime: 1 });
  reader = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 100 });
  plain = createPublicClient({ transport: http(chain.rpcUrl) });
  const bySymbol = new Map(chain.devnet.deployment.tokens.map((t) => [t.symbol, t.address.toLowerCase() as Address]));
  token = (symbol) => bySymbol.get(symbol)!;
  relayer = chain.devnet.deployment.contracts.vaultRelayer.toLowerCase() as Address;
});

after(async () => {
  for (const s of streams) await s.close();
  await chain?.stop();
});

describe('BalanceStream against the devnet', () => {
  it('resolves a watcher with the chain values: balances, vault-relayer allowances and the native balance', async () => {
    const stream = newStream();
    const trader = chain.devnet.deployment.accounts[0].address.toLowerCase() as Address;
    const watch = await stream.watch({ user: trader, tokens: [token('USDC'), token('WETH'), NATIVE_TOKEN], onChange: () => {} });
    for (const symbol of ['USDC', 'WETH']) {
      const v = watch.value(token(symbol))!;
      assert.equal(v.balance, await plain.readContract({ address: token(symbol), abi: erc20ReadAbi, functionName: 'balanceOf', args: [trader] }), symbol);
      assert.ok(v.balance! > 0n);
      assert.equal(v.allowance, await plain.readContract({ address: token(symbol), abi: erc20ReadAbi, functionName: 'allowance', args: [trader, relayer] }));
      assert.equal(v.allowance, maxUint256, 'demo traders approved the vault relayer');
    }
    assert.equal(watch.value(NATIVE_TOKEN)!.balance, await plain.getBalance({ address: trader }));
    assert.equal(watch.value(NATIVE_TOKEN)!.allowance, maxUint256);
    assert.equal(watch.value(token('DAI')), undefined, 'not one of its tokens');
    watch.close();
    await stream.close();
  });

  it('tells exactly the watchers of a changed token, once per block; unchanged blocks tell nobody and read no pair', async () => {
    const reads: ChainReadEvent[] = [];
    const stream = newStream({ onRead: (e) => reads.push(e) });
    const user = freshUser();
    let a = 0;
    let b = 0;
    const watchA = await stream.watch({ user, tokens: [token('USDC'), token('DAI')], onChange: () => a++ });
    const watchB = await stream.watch({ user, tokens: [token('DAI'), token('WBTC')], onChange: () => b++ });
    assert.equal(watchA.value(token('USDC'))!.balance, 0n);
    const bothRegistered = reads.length;

    await until('three block rounds', () => reads.slice(bothRegistered).filter((r) => r.kind === 'block' && r.ok).length >= 3);
    assert.deepEqual([a, b], [0, 0], 'no change, no notification');
    const blockReads = reads.slice(bothRegistered).filter((r) => r.kind === 'block' && r.ok);
    const full = blockReads.filter((r) => !r.delta);
    assert.ok(full.length <= 1 && full.every((r) => r.pairs === 3), 'at most the first round reads every pair: the union of both watchers, 3 pairs');
    assert.ok(blockReads.filter((r) => r.delta).every((r) => r.pairs === 0), 'later blocks name none of the pairs: nothing is read');
    const perBlock = new Map<bigint, number>();
    for (const r of blockReads) perBlock.set(r.block, (perBlock.get(r.block) ?? 0) + 1);
    assert.ok([...perBlock.values()].every((n) => n === 1), 'one round per block');

    const mark = reads.length;
    const amount = await chain.mint(user, 'USDC', '12.5');
    await until('A hears about USDC', () => a === 1);
    const minted = reads.slice(mark).filter((r) => r.kind === 'block' && r.ok && r.pairs > 0);
    assert.deepEqual(minted.map((r) => [r.delta, r.pairs]), [[true, 1]], 'the mint\'s block reads just (user, USDC)');
    assert.equal(watchA.value(token('USDC'))!.balance, amount);
    assert.equal(amount, parseUnits('12.5', 6));
    await chain.blocks(2);
    assert.equal(b, 0, 'B does not watch USDC');
    assert.equal(a, 1, 'told once');

    await chain.mint(user, 'DAI', '3');
    await until('both hear about DAI', () => a === 2 && b === 1);
    assert.equal(watchB.value(token('DAI'))!.balance, parseUnits('3', 18));
    watchA.close();
    watchB.close();
  });

  it('reads the pairs a block\'s logs name: both sides of a Transfer, the owner of an Approval to the vault relayer, not other approvals', async () => {
    const reads: ChainReadEvent[] = [];
    const stream = newStream({ onRead: (e) => reads.push(e) });
    const [t0, t1] = chain.devnet.deployment.accounts.filter((x) => x.role === 'trader').map((x) => x.address.toLowerCase() as Address);
    const seen = new Map<Address, number>();
    const tell = (user: Address) => () => seen.set(user, (seen.get(user) ?? 0) + 1);
    const w0 = await stream.watch({ user: t0!, tokens: [token('USDC'), token('DAI')], onChange: tell(t0!) });
    const w1 = await stream.watch({ user: t1!, tokens: [token('USDC'), token('DAI')], onChange: tell(t1!) });
    await until('a delta round', () => reads.some((r) => r.kind === 'block' && r.ok && r.delta));
    const before = { usdc0: w0.value(token('USDC'))!.balance!, usdc1: w1.value(token('USDC'))!.balance! };
    const mark = reads.length;
    const erc20 = parseAbi(['function transfer(address, uint256) returns (bool)', 'function approve(address, uint256) returns (bool)']);
    await chain.sendAndWait([
      { from: t0!, to: token('USDC'), data: encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [t1!, 1_000_000n] }) },
      { from: t0!, to: token('DAI'), data: encodeFunctionData({ abi: erc20, functionName: 'approve', args: [relayer, 5n] }) },
      { from: t1!, to: token('DAI'), data: encodeFunctionData({ abi: erc20, functionName: 'approve', args: [freshUser(), 7n] }) },
    ]);
    await until('both told about USDC, t0 about its DAI allowance', () => w0.value(token('DAI'))!.allowance === 5n && w1.value(token('USDC'))!.balance === before.usdc1 + 1_000_000n);
    assert.equal(w0.value(token('USDC'))!.balance, before.usdc0 - 1_000_000n);
    const deltaReads = reads.slice(mark).filter((r) => r.kind === 'block' && r.ok);
    assert.ok(deltaReads.every((r) => r.delta), 'no full round in between');
    assert.equal(deltaReads.reduce((n, r) => n + r.pairs, 0), 3, '(t0, USDC), (t1, USDC), (t0, DAI): not (t1, DAI), whose approval went to another spender');
    // restore the demo trader's allowance for other tests
    await chain.sendAndWait([{ from: t0!, to: token('DAI'), data: encodeFunctionData({ abi: erc20, functionName: 'approve', args: [relayer, maxUint256] }) }]);
    w0.close();
    w1.close();
  });

  it('shares tracking per user: the union of tokens, shrinking as watchers leave, gone with the last one', async () => {
    const reads: ChainReadEvent[] = [];
    const stream = newStream({ onRead: (e) => reads.push(e) });
    const user = freshUser();
    const other = freshUser();
    const w1 = await stream.watch({ user, tokens: [token('USDC'), token('DAI')], onChange: () => {} });
    const w2 = await stream.watch({ user, tokens: [token('DAI'), token('COW'), NATIVE_TOKEN], onChange: () => {} });
    const w3 = await stream.watch({ user: other, tokens: [token('USDC')], onChange: () => {} });
    assert.deepEqual(new Set(stream.trackedTokens(user)), new Set([token('USDC'), token('DAI'), token('COW'), NATIVE_TOKEN]));
    assert.equal(stream.stats().pairs, 5);
    assert.equal(stream.stats().users, 2);
    assert.equal(stream.stats().watchers, 3);

    // a second tab with the same tokens (any order of case) shares everything
    const w2b = await stream.watch({ user: user.toUpperCase().replace('0X', '0x') as Address, tokens: [token('DAI'), token('COW').toUpperCase().replace('0X', '0x') as Address, NATIVE_TOKEN], onChange: () => {} });
    assert.equal(stream.stats().pairs, 5);
    assert.equal(stream.stats().watchers, 4);
    assert.deepEqual(w2b.tokens, w2.tokens);

    w1.close();
    assert.deepEqual(new Set(stream.trackedTokens(user)), new Set([token('DAI'), token('COW'), NATIVE_TOKEN]));
    assert.equal(stream.stats().pairs, 4);
    w1.close(); // idempotent
    assert.equal(stream.stats().pairs, 4);
    w2.close();
    assert.equal(stream.stats().pairs, 4, 'the other tab still watches');
    assert.equal(w2b.value(token('COW'))!.balance, 0n);
    w2b.close();
    assert.equal(stream.trackedTokens(user), null, 'tracking stops with the last watcher');
    assert.equal(stream.stats().pairs, 1);
    w3.close();
    assert.deepEqual(stream.stats().users, 0);
    assert.equal(stream.stats().pairs, 0);

    // a second stream on the same block feed witnesses two more blocks being handled
    const readsBefore = reads.length;
    const witnessReads: ChainReadEvent[] = [];
    const witness = newStream({ onRead: (e) => witnessReads.push(e) });
    const ww = await witness.watch({ user: freshUser(), tokens: [token('USDC')], onChange: () => {} });
    const head = BigInt(await chain.blockNumber());
    await until('the witness stream handled two more blocks', () => witnessReads.some((r) => r.kind === 'block' && r.block >= head + 2n), 30_000);
    assert.equal(reads.length, readsBefore, 'nothing is read once nobody watches');
    ww.close();
  });

  it('serves hundreds of users from one multicall per block, and batches their initial reads', async () => {
    const reads: ChainReadEvent[] = [];
    const stream = newStream({ onRead: (e) => reads.push(e) });
    const users = Array.from({ length: 300 }, freshUser);
    const tokens = [token('USDC'), token('DAI'), token('WBTC'), token('COW'), NATIVE_TOKEN];
    const counts = new Map<Address, number>();
    const watches = await Promise.all(users.map((user) => stream.watch({ user, tokens, onChange: () => counts.set(user, (counts.get(user) ?? 0) + 1) })));
    const connect = reads.filter((r) => r.kind === 'connect');
    assert.equal(connect.length, 1, `300 simultaneous watchers share one initial read (got ${connect.length})`);
    assert.equal(connect[0].pairs, 1500);

    const lucky = users[123];
    await chain.mint(lucky, 'WBTC', '0.25');
    await until('the lucky user hears about it', () => counts.get(lucky) === 1);
    await chain.blocks(1);
    assert.deepEqual([...counts.keys()], [lucky], 'nobody else is told');
    const rounds = reads.filter((r) => r.kind === 'block' && r.ok);
    assert.ok(rounds.length > 0);
    assert.ok(rounds.filter((r) => !r.delta).every((r) => r.pairs === 1500) && rounds.filter((r) => !r.delta).length <= 1, 'only a first round reads all 1500 pairs');
    // later blocks: the 300 native balances (no log tells of them) plus what the block's logs name
    assert.ok(rounds.filter((r) => r.delta).every((r) => r.pairs === 300 || r.pairs === 301), `delta rounds read the native pairs (+1 for the mint): ${rounds.map((r) => r.pairs).join(',')}`);
    assert.ok(rounds.some((r) => r.delta && r.pairs === 301), 'the mint\'s block reads its pair');
    assert.equal(new Set(rounds.map((r) => r.block)).size, rounds.length, 'one read per block');
    for (const w of watches) w.close();
  });

  it('an initial read that fails rejects and leaves nothing behind; failing rounds are survived and changes made meanwhile still arrive', async () => {
    const proxy: FaultyRpcProxy = await startFaultyRpcProxy(chain.rpcUrl);
    try {
      // reads go through the proxy; blocks come from the node directly (so rounds run and fail)
      const flaky = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 2_000, retryCount: 0 }), { blockFeed: reader.blockFeed });
      const reads: ChainReadEvent[] = [];
      const stream = newStream({ reader: flaky, onRead: (e) => reads.push(e) });
      const user = freshUser();
      proxy.down = true;
      await assert.rejects(stream.watch({ user, tokens: [token('USDC')], onChange: () => {} }), httpStatus(503));
      assert.equal(stream.stats().users, 0);
      assert.equal(stream.stats().pairs, 0);
      proxy.down = false;

      let changes = 0;
      const watch = await stream.watch({ user, tokens: [token('USDC')], onChange: () => changes++ });
      await until('a block round', () => reads.some((r) => r.kind === 'block' && r.ok));
      proxy.down = true;
      const minted = await chain.mint(user, 'USDC', '7');
      await until('failing rounds', () => stream.stats().readFailures >= 2);
      assert.equal(changes, 0);
      proxy.down = false;
      await until('the change after recovery', () => changes === 1);
      assert.equal(watch.value(token('USDC'))!.balance, minted);
      watch.close();
    } finally {
      await proxy.close();
    }
  });

  it('closing (or aborting its signal) tells every watcher, stops reading and refuses new watchers', async () => {
    const controller = new AbortController();
    const reads: ChainReadEvent[] = [];
    const stream = newStream({ signal: controller.signal, onRead: (e) => reads.push(e) });
    let closed = 0;
    await stream.watch({ user: freshUser(), tokens: [token('USDC')], onChange: () => {}, onClose: () => closed++ });
    await stream.watch({ user: freshUser(), tokens: [token('DAI')], onChange: () => {}, onClose: () => closed++ });
    controller.abort();
    await until('both closed', () => closed === 2);
    assert.equal(stream.stats().users, 0);
    await assert.rejects(stream.watch({ user: freshUser(), tokens: [token('USDC')], onChange: () => {} }), StreamClosedError);
    const n = reads.length;
    await chain.blocks(2);
    assert.equal(reads.length, n);
  });
});
