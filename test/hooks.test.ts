/**
 * Hooks that really run in settlements (issue 10, points 4 and 5), on the real devnet with the node's own
 * auction loop: an owner who never approved places a partially fillable order whose pre-hook is an EIP-2612
 * permit to the vault relayer; it settles in two fills (the owner's balance is halved between them), the
 * pre-hook runs once, the post-hooks after each fill (one of them always reverts, one moves state we can read),
 * and GET /hooks lists every executed hook with the reference fields.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, encodeFunctionData, http, keccak256, maxUint256, parseAbi, parseSignature, stringToBytes, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { UNISWAP_V2_ROUTER_ABI } from '../src/orderbook/pricing/uniswap-v2-estimator.js';
import { HOOKS_TRAMPOLINE_ABI } from '../src/protocol/index.js';
import type { ChainNetwork } from '../src/chain/network.js';
import { waitFor as waitForValue } from './fixtures/wait-for.js';

const ERC20 = parseAbi([
  'function transfer(address, uint256) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
  'function nonces(address) view returns (uint256)',
  'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
]);
const USDC_UNIT = 10n ** 6n;

interface HooksBody {
  hooks: Array<Record<string, unknown>>;
  count: number;
  error?: string;
}

describe('hooks in settlements and hooks analytics', () => {
  let app: TestApp;
  let network: ChainNetwork;
  let USDC: Address;
  let WETH: Address;
  let trampoline: Address;
  let trader0: LocalAccount;
  let trader1: LocalAccount;

  const waitFor = <T,>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000) => waitForValue(what, probe, timeoutMs, 250);

  async function send(account: LocalAccount, to: Address, data: Hex, wait = true): Promise<Hex> {
    const wallet = createWalletClient({ account, chain: network.client.chain, transport: http(app.devnet!.rpcUrl) });
    const hash = await wallet.sendTransaction({ account, chain: network.client.chain, to, data, gas: 200_000n });
    if (wait) assert.equal((await network.client.waitForTransactionReceipt({ hash, pollingInterval: 200 })).status, 'success');
    return hash;
  }

  const read = (fn: 'balanceOf' | 'allowance' | 'nonces', args: Address[]) => network.client.readContract({ address: USDC, abi: ERC20, functionName: fn, args } as never) as Promise<bigint>;

  /** An account with ETH and USDC that never approved anything. */
  async function unapproved(usdc: string): Promise<LocalAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    const minted = await Promise.all([app.devnet!.faucet({ address: account.address, token: 'ETH', amount: '1' }), app.devnet!.faucet({ address: account.address, token: 'USDC', amount: usdc })]);
    await Promise.all(minted.map((m) => m.waitForReceipt()));
    return account;
  }

  /** `permit(owner → spender, value)` calldata signed by the owner for the given nonce (EIP-2612, domain of the token). */
  async function permitCall(owner: LocalAccount, spender: Address, value: bigint, nonce: bigint, signer: LocalAccount = owner): Promise<Hex> {
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
    const signature = await signer.signTypedData({
      domain: { name: 'USD Coin', version: '1', chainId: 31337, verifyingContract: USDC },
      types: { Permit: [{ name: 'owner', type: 'address' }, { name: 'spender', type: 'address' }, { name: 'value', type: 'uint256' }, { name: 'nonce', type: 'uint256' }, { name: 'deadline', type: 'uint256' }] },
      primaryType: 'Permit',
      message: { owner: owner.address, spender, value, nonce, deadline },
    });
    const { r, s, yParity } = parseSignature(signature);
    return encodeFunctionData({ abi: ERC20, functionName: 'permit', args: [owner.address, spender, value, deadline, yParity + 27, r, s] });
  }

  async function marketOut(amountIn: bigint, path: Address[]): Promise<bigint> {
    const amounts = await network.client.readContract({ address: network.amm!.router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsOut', args: [amountIn, path] });
    return amounts[amounts.length - 1]!;
  }

  /** Posts a signed order whose app data is the given document; returns the HTTP answer. */
  async function post(account: LocalAccount, document: string, params: Partial<Parameters<typeof makeOrder>[0]> = {}) {
    const appDataHash = keccak256(stringToBytes(document));
    const order = makeOrder({ sellToken: USDC, buyToken: WETH, sellAmount: 1000n * USDC_UNIT, buyAmount: 1n, appData: appDataHash, validTo: Math.floor(Date.now() / 1000) + 900, ...params });
    const signature = await signOrder(account, order);
    return call(app.baseUrl, 'POST', '/devnet/api/v1/orders', { ...orderBody(order, signature, 'eip712', account.address), appData: document, appDataHash });
  }

  const hooksDocument = (pre: unknown[], post: unknown[] = []) => JSON.stringify({ appCode: 'hooks-test', metadata: { hooks: { version: '0.2.0', pre, post } } });
  const getHooks = async (query: string) => call(app.baseUrl, 'GET', `/hooks?${query}`);

  before(async () => {
    app = await startTestApp({ AUCTIONS: 'true' });
    network = app.networks[0]!;
    const d = app.devnet!.describe();
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address;
    [USDC, WETH] = [token('USDC'), token('WETH')];
    trampoline = d.contracts.hooksTrampoline.toLowerCase() as Address;
    const traders = d.accounts.filter((a) => a.role === 'trader');
    trader0 = privateKeyToAccount(traders[0]!.privateKey);
    trader1 = privateKeyToAccount(traders[1]!.privateKey);
  });

  after(async () => {
    await app?.stop();
  });

  it('lists the trampoline in GET /devnet; only the settlement may call it', async () => {
    const res = await call(app.baseUrl, 'GET', '/devnet');
    assert.equal(res.status, 200);
    assert.equal(res.body.contracts.hooksTrampoline.toLowerCase(), trampoline);
    assert.equal(network.hooksTrampoline, trampoline);
    assert.ok(((await network.client.getCode({ address: trampoline })) ?? '0x').length > 2, 'code at the trampoline');
    const data = encodeFunctionData({ abi: HOOKS_TRAMPOLINE_ABI, functionName: 'execute', args: ['0x01', 0, [{ target: USDC, callData: '0x', gasLimit: 50_000n }]] });
    await assert.rejects(network.client.call({ account: trader0.address, to: trampoline, data }), /NotASettlement|revert/i, 'an EOA cannot call it');
    assert.equal(await network.reader.callSucceeds({ from: network.settlement, to: trampoline, data }), true, 'the settlement can');
  });

  it('refuses orders whose hooks need too much gas (TooMuchGas), and an unapproved owner without a working permit', async () => {
    const huge = await post(trader0, hooksDocument([{ target: USDC, callData: '0x', gasLimit: '8000001' }]), { buyAmount: 1n });
    assert.equal(huge.status, 400, JSON.stringify(huge.body));
    assert.equal(huge.body.errorType, 'TooMuchGas');

    const owner = await unapproved('1000');
    const none = await post(owner, hooksDocument([]));
    assert.equal(none.status, 400);
    assert.equal(none.body.errorType, 'InsufficientAllowance');
    const forged = await permitCall(owner, network.vaultRelayer, maxUint256, 0n, trader1); // signed by someone else
    const bad = await post(owner, hooksDocument([{ target: USDC, callData: forged, gasLimit: '100000' }]));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorType, 'InsufficientAllowance', 'a permit that does not simulate grants nothing');
  });

  it('settles a permit pre-hook order of an unapproved owner in two fills: pre-hook once, post-hooks after each, a reverting hook does not revert', async () => {
    const owner = await unapproved('1000');
    const watcher = privateKeyToAccount(generatePrivateKey()).address;
    assert.equal(await read('allowance', [owner.address, network.vaultRelayer]), 0n);
    // a few USDC in the settlement's buffer: a hook that tries to take them runs as the trampoline and gets nothing
    await (await app.devnet!.faucet({ address: network.settlement, token: 'USDC', amount: '5' })).waitForReceipt();
    const buffer = await read('balanceOf', [network.settlement]);

    const pre = [{ target: USDC, callData: await permitCall(owner, network.vaultRelayer, maxUint256, 0n), gasLimit: '100000', dappId: 'permit-dapp' }];
    const postHooks = [
      { target: USDC, callData: await permitCall(owner, watcher, 12_345n, 1n), gasLimit: '100000' }, // works once (nonce 1)
      { target: USDC, callData: '0xdeadbeef', gasLimit: '50000' }, // always reverts
      { target: USDC, callData: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [watcher, buffer] }), gasLimit: '60000' }, // no funds as the trampoline
    ];
    const document = hooksDocument(pre, postHooks);
    const buyAmount = ((await marketOut(1000n * USDC_UNIT, [USDC, WETH])) * 95n) / 100n;

    // no auction between placing the order and halving the owner's balance (auctions held back: an auction of the
    // whole order first would fill it whole, or fail its simulation and leave the order out for 20 blocks)
    assert.equal((await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: true })).status, 200);
    let uid: Hex;
    try {
      await app.auctionLoops.get('devnet')!.idle(); // a cycle already past the gate ends first
      const placed = await post(owner, document, { buyAmount, partiallyFillable: true });
      assert.equal(placed.status, 201, JSON.stringify(placed.body));
      uid = placed.body as Hex;
      await send(owner, USDC, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [trader1.address, 500n * USDC_UNIT] }));
    } finally {
      await call(app.baseUrl, 'POST', '/devnet/control/auctions', { paused: false });
    }

    const getOrder = async () => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body;
    await waitFor('a first fill', async () => BigInt((await getOrder()).executedSellAmount) > 0n);
    assert.equal((await getOrder()).executedSellAmount, (500n * USDC_UNIT).toString(), 'filled as far as the balance allows');
    assert.equal(await read('allowance', [owner.address, network.vaultRelayer]), maxUint256, 'the pre-hook granted the allowance');
    assert.equal(await read('allowance', [owner.address, watcher]), 12_345n, 'the post-hook ran');
    assert.equal(await read('balanceOf', [watcher]), 0n, 'a hook cannot move the settlement buffer');
    assert.ok((await read('balanceOf', [network.settlement])) >= buffer);

    await send(trader1, USDC, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [owner.address, 500n * USDC_UNIT] }));
    await waitFor('the order fulfilled', async () => (await getOrder()).status === 'fulfilled');
    const trades = (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ txHash: Hex; blockNumber: number }>;
    assert.equal(trades.length, 2);
    const [first, second] = [...trades].sort((a, b) => a.blockNumber - b.blockNumber);
    assert.notEqual(first!.txHash, second!.txHash, 'two settlements');
    for (const t of trades) assert.equal((await network.client.getTransactionReceipt({ hash: t.txHash })).status, 'success');
    assert.equal(await read('nonces', [owner.address]), 2n, 'the permit pre-hook was not run again on the second fill');

    // GET /hooks: one row per executed hook, newest first
    const ours = (body: HooksBody) => body.hooks.filter((h) => h.tx_hash === first!.txHash || h.tx_hash === second!.txHash);
    const body = await waitFor('the hooks of both settlements indexed', async () => {
      const res = await getHooks('blockchain=devnet&period=last%201d');
      return ours(res.body as HooksBody).length === 7 ? res : null;
    });
    assert.equal(body.status, 200);
    assert.equal(body.headers.get('cache-control'), 'public, max-age=300');
    const all = body.body as HooksBody;
    assert.equal(all.count, all.hooks.length);
    const rows = ours(all);
    const expectedKeys = ['app_code', 'app_hash', 'app_id', 'block_time', 'destination_chain_id', 'destination_token_address', 'environment', 'gas_limit', 'hook_type', 'is_bridging', 'success', 'target', 'tx_hash'];
    for (const row of rows) {
      assert.deepEqual(Object.keys(row).sort(), expectedKeys);
      assert.equal(typeof row.success, 'boolean');
      assert.equal(row.app_code, 'hooks-test');
      assert.equal(row.app_hash, keccak256(stringToBytes(document)));
      assert.equal(row.target, USDC);
      assert.equal(row.is_bridging, false);
      assert.equal(row.destination_chain_id, null);
      assert.match(String(row.block_time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    const summary = (tx: Hex) => rows.filter((r) => r.tx_hash === tx).map((r) => `${r.hook_type}:${r.gas_limit}:${r.success}:${r.app_id}`).sort();
    assert.deepEqual(summary(first!.txHash), ['post:100000:true:null', 'post:50000:false:null', 'post:60000:false:null', 'pre:100000:true:permit-dapp']);
    assert.deepEqual(summary(second!.txHash), ['post:100000:false:null', 'post:50000:false:null', 'post:60000:false:null'], 'no pre-hook on the second fill');

    const page = await getHooks('blockchain=devnet&period=last%201d&limit=2&offset=1');
    assert.equal(page.status, 200);
    assert.equal(page.body.count, 2);
    assert.deepEqual(page.body.hooks, all.hooks.slice(1, 3));
  });

  it('answers bad parameters with 400 {hooks: [], count: 0, error} and no-store', async () => {
    for (const query of ['blockchain=devnet&period=last%202d', 'blockchain=moon&period=last%201d', 'period=last%201d', 'blockchain=devnet', 'blockchain=devnet&period=last%201d&limit=0', 'blockchain=devnet&period=last%201d&offset=-1']) {
      const res = await getHooks(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.headers.get('cache-control'), 'no-store', query);
      assert.deepEqual(Object.keys(res.body).sort(), ['count', 'error', 'hooks'], query);
      assert.deepEqual([res.body.hooks, res.body.count], [[], 0], query);
      assert.equal(typeof res.body.error, 'string', query);
    }
    const other = await getHooks('blockchain=mainnet&period=last%203h');
    assert.equal(other.status, 200, 'a reference network we do not serve: no rows without an analytics provider');
    assert.deepEqual(other.body, { hooks: [], count: 0 });
  });
});
