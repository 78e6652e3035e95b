import { after, before, describe, it } from 'node:test';
import { httpStatus } from './test-errors.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, http, keccak256, maxUint256, parseAbi, stringToHex, toHex, type Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress, sign } from 'viem/accounts';
import { BlockFeed, type BlockHead } from './block-feed.js';
import { createChainClient } from './client.js';
import { startFaultyRpcProxy, type FaultyRpcProxy } from './faulty-rpc-proxy.js';
import { ChainReader, metadataBytes } from './reader.js';
import { startTestDevnet, type TestDevnet } from './test-devnet.js';
import { VAULT_RELAYER_ADDRESS } from '../protocol/contract-addresses.js';
import { erc20ReadAbi } from './erc20-abi.js';

const NATIVE: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

let chain: TestDevnet;
let proxy: FaultyRpcProxy;
let reader: ChainReader;
let proxied: ChainReader;
let plain: ReturnType<typeof createPublicClient>;

const balanceOf = (token: Address, owner: Address) => plain.readContract({ address: token, abi: erc20ReadAbi, functionName: 'balanceOf', args: [owner] });
const allowanceOf = (token: Address, owner: Address) => plain.readContract({ address: token, abi: erc20ReadAbi, functionName: 'allowance', args: [owner, VAULT_RELAYER_ADDRESS] });

before(async () => {
  chain = await startTestDevnet();
  proxy = await startFaultyRpcProxy(chain.rpcUrl);
  reader = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 200 });
  proxied = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: proxy.url, timeoutMs: 5_000, retryCount: 2, retryBaseDelayMs: 10 }), { pollingIntervalMs: 100 });
  plain = createPublicClient({ transport: http(chain.rpcUrl) });
});

after(async () => {
  await proxy?.close();
  await chain?.stop();
});

describe('ChainReader against the devnet', () => {
  it('reads ERC-20 balances of many tokens in one call, native placeholder included', async () => {
    const { tokens, accounts } = chain.devnet.deployment;
    const trader = accounts[0].address;
    const addresses = [...tokens.map((t) => t.address), NATIVE, accounts[1].address];
    const balances = await reader.erc20Balances(trader, addresses);
    for (const [i, t] of tokens.entries()) {
      const expected = await balanceOf(t.address, trader);
      assert.ok(expected > 0n, `trader holds no ${t.symbol}`);
      assert.equal(balances[i], expected, t.symbol);
    }
    assert.equal(balances[tokens.length], await plain.getBalance({ address: trader }));
    assert.equal(balances[tokens.length + 1], null, 'an EOA is not a token');
  });

  it('reads balances and allowances of thousands of (owner, token) pairs in chunked multicalls at one block', async () => {
    const { tokens, accounts } = chain.devnet.deployment;
    const owners: Address[] = [...accounts.map((a) => a.address), chain.devnet.deployment.contracts.smartWallet];
    while (owners.length < 300) owners.push(privateKeyToAddress(generatePrivateKey()));
    const pairs = owners.flatMap((owner) => tokens.map((t) => ({ owner, token: t.address })));
    assert.equal(pairs.length, 300 * tokens.length);

    const before = proxy.counts.methods.eth_call ?? 0;
    const block = await proxied.blockNumber();
    const results = await proxied.balancesAndAllowances(pairs, VAULT_RELAYER_ADDRESS, { blockNumber: block });
    const calls = (proxy.counts.methods.eth_call ?? 0) - before;
    assert.equal(calls, Math.ceil((pairs.length * 2) / 500), 'one eth_call per 500 reads');
    assert.equal(results.length, pairs.length);

    for (const i of [0, 1, 5, 7, 13, 20, 29, 35, 100, pairs.length - 1]) {
      const r = results[i];
      assert.equal(r.owner, pairs[i].owner);
      assert.equal(r.balance, await balanceOf(r.token, r.owner), `balance of pair ${i}`);
      assert.equal(r.allowance, await allowanceOf(r.token, r.owner), `allowance of pair ${i}`);
    }
    const traderRows = results.filter((r) => r.owner === accounts[0].address);
    assert.ok(traderRows.every((r) => r.allowance === maxUint256), 'traders approved the vault relayer');
    assert.ok(results.slice(-30).every((r) => r.balance === 0n && r.allowance === 0n), 'fresh addresses hold nothing');
    assert.deepEqual(await reader.allowances(accounts[0].address, [tokens[1].address, NATIVE], VAULT_RELAYER_ADDRESS), [maxUint256, maxUint256]);
  });

  it('reads one pair\'s balance and allowance with the others asked for meanwhile, in one eth_call, each read fresh', async () => {
    const { tokens, accounts } = chain.devnet.deployment;
    const owners = accounts.slice(0, 3).map((a) => a.address);
    const asked = [...owners, owners[0]!].flatMap((owner) => tokens.slice(0, 2).map((t) => ({ owner, token: t.address })));
    const before = proxy.counts.methods.eth_call ?? 0;
    const results = await Promise.all(asked.map(({ owner, token }) => proxied.balanceAndAllowance(owner, token, VAULT_RELAYER_ADDRESS)));
    assert.equal((proxy.counts.methods.eth_call ?? 0) - before, 1, 'reads asked for together share one eth_call');
    for (const [i, r] of results.entries()) {
      assert.equal(r.owner, asked[i]!.owner);
      assert.equal(r.token, asked[i]!.token);
      assert.equal(r.balance, await balanceOf(r.token, r.owner), `balance ${i}`);
      assert.equal(r.allowance, await allowanceOf(r.token, r.owner), `allowance ${i}`);
    }

    // a read asked for while another is in flight goes out after it, and sees what happened in between
    const fresh = privateKeyToAccount(generatePrivateKey());
    const token = tokens[0]!.address;
    const wallet = createWalletClient({ account: privateKeyToAccount(accounts[0].privateKey), transport: http(chain.rpcUrl) });
    const first = proxied.balanceAndAllowance(fresh.address, token, VAULT_RELAYER_ADDRESS);
    const hash = await wallet.writeContract({ address: token, abi: parseAbi(['function transfer(address to, uint256 amount) returns (bool)']), functionName: 'transfer', args: [fresh.address, 7n], chain: null });
    await plain.waitForTransactionReceipt({ hash });
    const second = await proxied.balanceAndAllowance(fresh.address, token, VAULT_RELAYER_ADDRESS);
    await first;
    assert.equal(second.balance, 7n, 'asked for after the transfer: reads after it');

    // an outage fails every read of the call, and the next read works again
    proxy.down = true;
    try {
      await Promise.all([
        assert.rejects(proxied.balanceAndAllowance(owners[0]!, token, VAULT_RELAYER_ADDRESS), httpStatus(503)),
        assert.rejects(proxied.balanceAndAllowance(owners[1]!, token, VAULT_RELAYER_ADDRESS), httpStatus(503)),
      ]);
    } finally {
      proxy.down = false;
    }
    assert.equal((await proxied.balanceAndAllowance(fresh.address, token, VAULT_RELAYER_ADDRESS)).balance, 7n);
  });

  it('reads token metadata (string and bytes32), caches it, and returns null for non-tokens', async () => {
    const usdc = chain.devnet.deployment.tokens.find((t) => t.symbol === 'USDC')!;
    assert.deepEqual(await proxied.tokenMetadata(usdc.address), { address: usdc.address.toLowerCase(), symbol: 'USDC', name: 'USD Coin', decimals: 6 });

    // a token answering symbol()/name() with bytes32 and decimals() with 18, like MKR
    const mkr: Address = '0x00000000000000000000000000000000000a11ce';
    const word = stringToHex('MKR', { size: 32 }).slice(2);
    const code = `0x60003560e01c63313ce56714603857` + `7f${word}` + `60005260206000f3` + `5b601260005260206000f3`;
    await chain.rpc('anvil_setCode', [mkr, code]);
    assert.deepEqual(await reader.tokenMetadata(mkr), { address: mkr, symbol: 'MKR', name: 'MKR', decimals: 18 });

    const eoa = chain.devnet.deployment.accounts[0].address;
    assert.equal(await reader.tokenMetadata(eoa), null);
    assert.equal(await reader.tokenMetadata(chain.devnet.deployment.contracts.settlement), null);

    const calls = proxy.counts.methods.eth_call ?? 0;
    const again = await proxied.tokensMetadata([usdc.address, usdc.address.toLowerCase() as Address]);
    assert.equal(again[0]?.symbol, 'USDC');
    assert.equal(again[1]?.decimals, 6);
    assert.equal(proxy.counts.methods.eth_call ?? 0, calls, 'served from the cache');
  });

  /** Deploys the tests' HostileToken, whose symbol() and name() return the given texts. */
  async function deployHostileToken(symbol: string, name: string): Promise<Address> {
    const artifact = JSON.parse(readFileSync(new URL('../../test/fixtures/artifacts/HostileToken.json', import.meta.url), 'utf8')) as { abi: Abi; bytecode: Hex };
    const deployer = privateKeyToAccount(chain.devnet.deployment.accounts[0].privateKey);
    const wallet = createWalletClient({ account: deployer, transport: http(chain.rpcUrl) });
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: [symbol, name], chain: null });
    const receipt = await plain.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    assert.equal(receipt.status, 'success');
    return receipt.contractAddress!;
  }

  it('decodes a hostile token\'s texts cut to 64/128 characters, without control, bidi or zero-width characters', async () => {
    // an 8 kB symbol, a name posing as "USDC" with a right-to-left override, invisible joiners and line breaks
    const token = await deployHostileToken('X\u200b'.repeat(2_000), '\u202eCDSU\u202c\u200d Official\nClaim at evil.example\u2066\u0007' + 'N'.repeat(500));
    const metadata = await reader.tokenMetadata(token);
    assert.ok(metadata);
    assert.equal(metadata.symbol, 'X'.repeat(64));
    assert.equal(metadata.name, `CDSU Official Claim at evil.example${'N'.repeat(128 - 35)}`);
    assert.equal(Array.from(metadata.name!).length, 128);
    assert.equal(metadata.decimals, 18);
  });

  it('bounds the metadata cache by bytes: long texts cannot hold more than the budget', async () => {
    const budget = 3 * metadataBytes({ address: NATIVE, symbol: 'S'.repeat(64), name: 'N'.repeat(128), decimals: 18 });
    const small = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 200, metadataCacheBytes: budget });
    const tokens: Address[] = [];
    for (let i = 0; i < 5; i++) tokens.push(await deployHostileToken(`${i}`.repeat(10_000), `${i}`.repeat(10_000)));
    for (const [i, token] of tokens.entries()) {
      assert.equal((await small.tokenMetadata(token))?.symbol, `${i}`.repeat(64));
      assert.ok(small.metadataCacheUsage.bytes <= budget, `${small.metadataCacheUsage.bytes} > ${budget}`);
    }
    assert.equal(small.metadataCacheUsage.entries, 3, 'the oldest entries went to make room');
    // still served correctly after eviction (read again from the chain)
    assert.equal((await small.tokenMetadata(tokens[0]))?.name, '0'.repeat(128));
  });

  it('forgets cached metadata on clearCaches: a token gone with a reverted chain reads as no token', async () => {
    const fresh = new ChainReader(createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 }), { pollingIntervalMs: 200 });
    const snapshot = await plain.request({ method: 'evm_snapshot' as never }) as Hex;
    const token = await deployHostileToken('GONE', 'Gone Token');
    assert.equal((await fresh.tokenMetadata(token))?.symbol, 'GONE');
    assert.equal(await plain.request({ method: 'evm_revert' as never, params: [snapshot] as never }), true);
    assert.equal((await fresh.tokenMetadata(token))?.symbol, 'GONE', 'cached: the chain is not asked again');
    fresh.clearCaches();
    assert.equal(fresh.metadataCacheUsage.entries, 0);
    assert.equal(await fresh.tokenMetadata(token), null, 'read again: no code at that address any more');
  });

  it('does not cache a transport failure as "not a token"', async () => {
    const wbtc = chain.devnet.deployment.tokens.find((t) => t.symbol === 'WBTC')!;
    proxy.down = true;
    try {
      await assert.rejects(proxied.tokenMetadata(wbtc.address), httpStatus(503));
    } finally {
      proxy.down = false;
    }
    assert.deepEqual(await proxied.tokenMetadata(wbtc.address), { address: wbtc.address.toLowerCase(), symbol: 'WBTC', name: 'Wrapped BTC', decimals: 8 });
  });

  it('checks EIP-1271 signatures: the wallet owner signs → true; anything else → false', async () => {
    const { contracts, accounts, tokens } = chain.devnet.deployment;
    const digest = keccak256(toHex('batchbook 1271 test'));
    const good = await sign({ hash: digest, privateKey: accounts[0].privateKey, to: 'hex' });
    const bad = await sign({ hash: digest, privateKey: accounts[1].privateKey, to: 'hex' });
    assert.equal(await reader.isValidSignature1271(contracts.smartWallet, digest, good), true);
    assert.equal(await reader.isValidSignature1271(contracts.smartWallet, digest, bad), false);
    assert.equal(await reader.isValidSignature1271(contracts.smartWallet, keccak256('0x01'), good), false, 'other digest');
    assert.equal(await reader.isValidSignature1271(contracts.smartWallet, digest, '0x1234'), false, 'malformed signature');
    assert.equal(await reader.isValidSignature1271(accounts[0].address, digest, good), false, 'EOA: empty return');
    assert.equal(await reader.isValidSignature1271(tokens[1].address, digest, good), false, 'reverting contract');
    assert.equal(await reader.isValidSignature1271(contracts.smartWallet, digest, good, { caller: contracts.settlement }), true);
    proxy.down = true;
    try {
      await assert.rejects(proxied.isValidSignature1271(contracts.smartWallet, digest, good), httpStatus(503), 'an outage is not "invalid"');
    } finally {
      proxy.down = false;
    }
  });

  it('reads native balance, code, gas price and block number', async () => {
    const { contracts, accounts } = chain.devnet.deployment;
    assert.equal(await reader.nativeBalance(accounts[0].address), await plain.getBalance({ address: accounts[0].address }));
    assert.equal(await reader.hasCode(contracts.settlement), true);
    assert.equal(await reader.hasCode(contracts.multicall3), true);
    assert.equal(await reader.hasCode(accounts[0].address), false);
    assert.ok((await reader.gasPrice()) > 0n);
    const a = await reader.blockNumber();
    await chain.mine(2);
    assert.ok((await reader.blockNumber()) >= a + 2n);
  });

  it('retries transient HTTP failures with backoff and gives up on permanent ones', async () => {
    const failedBefore = proxy.counts.failed;
    proxy.failNext(2, 503);
    assert.ok((await proxied.blockNumber()) > 0n);
    assert.equal(proxy.counts.failed - failedBefore, 2);

    proxy.failNext(5, 502);
    await assert.rejects(proxied.blockNumber(), httpStatus(502));
    assert.equal(proxy.counts.failed - failedBefore, 5, 'first attempt + 2 retries');
    proxy.failNext(0);

    proxy.failNext(3, 400);
    await assert.rejects(proxied.blockNumber(), httpStatus(400));
    assert.equal(proxy.counts.failed - failedBefore, 6, 'a 400 is not retried');
    proxy.failNext(0);
  });
});

describe('BlockFeed', () => {
  it('fans one subscription out to many listeners and stops with the last one', async () => {
    const feed = new BlockFeed(proxied.client, { pollingIntervalMs: 50 });
    const a: BlockHead[] = [];
    const b: BlockHead[] = [];
    const stopA = feed.subscribe((blk) => void a.push(blk));
    const controller = new AbortController();
    feed.subscribe((blk) => void b.push(blk), controller.signal);
    feed.subscribe(() => {
      throw new Error('a broken listener');
    }, controller.signal);
    assert.equal(feed.listenerCount, 3);

    const waitFor = async (cond: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await waitFor(() => a.length >= 1 && b.length >= 1);
    const start = a.at(-1)!.number;
    await chain.mine(1);
    await waitFor(() => a.some((x) => x.number > start) && b.some((x) => x.number > start));
    const newest = a.find((x) => x.number > start)!;
    assert.equal(b.find((x) => x.number === newest.number)?.hash, newest.hash);
    assert.equal(newest.parentHash.length, 66);

    controller.abort();
    assert.equal(feed.listenerCount, 1);
    const seenB = b.length;
    await chain.mine(1);
    await waitFor(() => a.at(-1)!.number > newest.number);
    assert.equal(b.length, seenB, 'an aborted listener hears nothing more');

    stopA();
    assert.equal(feed.listenerCount, 0);
    await new Promise((r) => setTimeout(r, 150));
    const polls = proxy.counts.methods.eth_getBlockByNumber ?? 0;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(proxy.counts.methods.eth_getBlockByNumber ?? 0, polls, 'no polling without listeners');
  });

  it('subscribes over WebSocket when the RPC URL is ws://', async () => {
    const client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl.replace(/^http/, 'ws'), timeoutMs: 5_000 });
    try {
      assert.equal(client.transport.type, 'webSocket');
      const wsReader = new ChainReader(client);
      const trader = chain.devnet.deployment.accounts[0].address;
      assert.deepEqual(await wsReader.erc20Balances(trader, [chain.devnet.deployment.tokens[1].address]), await reader.erc20Balances(trader, [chain.devnet.deployment.tokens[1].address]));
      const heads: bigint[] = [];
      const controller = new AbortController();
      wsReader.onBlock((b) => void heads.push(b.number), controller.signal);
      const deadline = Date.now() + 10_000;
      while (heads.length < 2 && Date.now() < deadline) {
        await chain.mine(1);
        await new Promise((r) => setTimeout(r, 100));
      }
      controller.abort();
      assert.ok(heads.length >= 2 && heads[1] > heads[0], `heads ${heads}`);
    } finally {
      const socket = await (client.transport as unknown as { getRpcClient(): Promise<{ close(): void }> }).getRpcClient();
      socket.close();
    }
  });

  it('is shared by ChainReader.onBlock', async () => {
    const heads: bigint[] = [];
    const controller = new AbortController();
    reader.onBlock((b) => void heads.push(b.number), controller.signal);
    reader.onBlock((b) => void heads.push(b.number), controller.signal);
    assert.equal(reader.blockFeed.listenerCount, 2);
    const deadline = Date.now() + 10_000;
    while (heads.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(heads.length >= 2, `the two listeners got ${heads.length} heads within 10 s, expected one each`);
    assert.equal(typeof heads[0], 'bigint');
    assert.equal(heads[0], heads[1], 'both listeners got the same head');
    controller.abort();
    assert.equal(reader.blockFeed.listenerCount, 0);
  });
});

