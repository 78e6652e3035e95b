/**
 * The control API and deterministic mode, as a test author drives them through startBatchbook and the official
 * SDK: two fresh deterministic instances running the same steps (mine 2 blocks, place the same two signed crossing
 * orders, run an auction) give identical hashes; auctions run only when asked; revert puts the chain, the database
 * and the node back (an order placed after the snapshot is 404 at once, balances and nonces as before, the same
 * signed order is accepted again with the same UID); time makes a passed order read `expired`; bad requests get the
 * order book's error envelope.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OrderBookApi, OrderSigningUtils, setGlobalAdapter } from '@cowprotocol/cow-sdk';
import { ViemAdapter } from '@cowprotocol/sdk-viem-adapter';
import { createPublicClient, http, keccak256, parseAbi, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startBatchbook, type Batchbook } from '../src/index.js';

const CHAIN_ID = 31337;
const override = { settlementContractOverride: { [CHAIN_ID]: '0x9008D19f58AAbD9eD0D60971565AA8510560ab41' } } as never;
const APP_DATA = '{}';
const APP_DATA_HASH = keccak256(toHex(APP_DATA));
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

async function control<T>(bb: Batchbook, path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${bb.url}/devnet/control/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

async function ok<T>(bb: Batchbook, path: string, body: unknown): Promise<T> {
  const r = await control<T>(bb, path, body);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

function sdk(bb: Batchbook): OrderBookApi {
  return new OrderBookApi({ chainId: CHAIN_ID as never, env: 'prod', baseUrls: { [CHAIN_ID]: bb.orderBookUrl } as never, backoffOpts: { numOfAttempts: 1 } } as never);
}

interface Signed {
  order: Record<string, unknown>;
  signature: string;
  signingScheme: string;
  owner: Address;
}

async function sign(bb: Batchbook, trader: PrivateKeyAccount, order: Record<string, unknown>): Promise<Signed> {
  setGlobalAdapter(new ViemAdapter({ provider: createPublicClient({ transport: http(bb.rpcUrl) }) as never, signer: trader as never }) as never);
  const signed = await OrderSigningUtils.signOrder(order as never, CHAIN_ID as never, trader as never, override);
  return { order, signature: signed.signature, signingScheme: signed.signingScheme as string, owner: trader.address };
}

function send(bb: Batchbook, s: Signed): Promise<string> {
  return sdk(bb).sendOrder({ ...s.order, appData: APP_DATA, appDataHash: APP_DATA_HASH, signature: s.signature, signingScheme: s.signingScheme, from: s.owner } as never);
}

async function rpc<T>(bb: Batchbook, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(bb.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: T }).result;
}

/** Two crossing orders of the two demo traders (WETH → USDC and USDC → WETH), valid for an hour of chain time. */
async function crossingOrders(bb: Batchbook): Promise<[Signed, Signed]> {
  const [a, b] = bb.accounts.filter((x) => x.role === 'trader').map((x) => privateKeyToAccount(x.privateKey));
  const token = (s: string) => bb.tokens.find((t) => t.symbol === s)!.address;
  const head = await rpc<{ timestamp: Hex }>(bb, 'eth_getBlockByNumber', ['latest', false]);
  const validTo = Number(BigInt(head.timestamp)) + 3600;
  const common = { validTo, appData: APP_DATA_HASH, feeAmount: '0', kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20' };
  return [
    await sign(bb, a!, { ...common, receiver: a!.address, sellToken: token('WETH'), buyToken: token('USDC'), sellAmount: String(10n ** 18n), buyAmount: String(1_000n * 10n ** 6n) }),
    await sign(bb, b!, { ...common, receiver: b!.address, sellToken: token('USDC'), buyToken: token('WETH'), sellAmount: String(3_000n * 10n ** 6n), buyAmount: String(5n * 10n ** 17n) }),
  ];
}

interface Run {
  genesis: string;
  head: string;
  tokens: string[];
  uids: string[];
  auction: { auctionId: number; winner: string | null; txHash: string | null };
  settlementBlock: string;
}

async function sameSteps(bb: Batchbook): Promise<Run> {
  await ok(bb, 'mine', { blocks: 2 });
  const orders = await crossingOrders(bb);
  const uids = [await send(bb, orders[0]), await send(bb, orders[1])];
  const auction = await ok<Run['auction']>(bb, 'auctions/run', {});
  const receipt = auction.txHash ? await rpc<{ blockHash: string }>(bb, 'eth_getTransactionReceipt', [auction.txHash]) : null;
  const genesis = await rpc<{ hash: string }>(bb, 'eth_getBlockByNumber', ['0x0', false]);
  const head = await rpc<{ hash: string }>(bb, 'eth_getBlockByNumber', ['latest', false]);
  return { genesis: genesis.hash, head: head.hash, tokens: bb.tokens.map((t) => t.address), uids, auction, settlementBlock: receipt?.blockHash ?? '' };
}

describe('control API and deterministic mode', () => {
  let x: Batchbook;
  let y: Batchbook;
  before(async () => {
    // @ts-expect-error plain JavaScript build scripts without type declarations
    const { distIsCurrent } = await import('../scripts/build-fingerprint.mjs');
    // @ts-expect-error plain JavaScript build scripts without type declarations
    if (!distIsCurrent()) await (await import('../scripts/build.mjs')).build({ compiler: 'esbuild' });
    [x, y] = await Promise.all([startBatchbook({ deterministic: true, startTimeoutMs: 600_000 }), startBatchbook({ deterministic: true, startTimeoutMs: 600_000 })]);
  }, { timeout: 660_000 }); // above the instances' own start timeout
  after(async () => {
    await Promise.all([x?.stop(), y?.stop()]);
  });

  it('two fresh deterministic instances running the same steps give identical hashes and UIDs', async () => {
    const [rx, ry] = [await sameSteps(x), await sameSteps(y)];
    assert.ok(rx.auction.txHash, `the auction settled: ${JSON.stringify(rx.auction)}`);
    assert.ok(rx.auction.winner);
    assert.deepEqual(rx, ry);
    // the settled orders already read fulfilled when auctions/run answered
    for (const uid of rx.uids) assert.equal((await sdk(x).getOrder(uid)).status, 'fulfilled');
  });

  it('holds auctions back until asked: blocks and orders start none', async () => {
    const before = await ok<{ auctionId: number }>(x, 'auctions/run', {});
    await ok(x, 'mine', { blocks: 3 });
    const orders = await crossingOrders(x);
    await send(x, orders[0]);
    await ok(x, 'mine', { blocks: 1 });
    const after = await ok<{ auctionId: number }>(x, 'auctions/run', {});
    assert.equal(after.auctionId, before.auctionId + 1, 'no auction ran in between');
  });

  it('revert puts chain, database and node back; the same signed order is accepted again with the same UID', async () => {
    const [a] = x.accounts.filter((t) => t.role === 'trader');
    const weth = x.tokens.find((t) => t.symbol === 'WETH')!.address;
    const client = createPublicClient({ transport: http(x.rpcUrl) });
    const balance = () => client.readContract({ address: weth, abi: ERC20, functionName: 'balanceOf', args: [a!.address] });
    const nonce = () => client.getTransactionCount({ address: a!.address });
    const { id } = await ok<{ id: string }>(x, 'snapshot', {});
    const [wethBefore, ethBefore, nonceBefore] = [await balance(), await client.getBalance({ address: a!.address }), await nonce()];
    const orders = await crossingOrders(x);
    const uid = await send(x, orders[0]);
    await send(x, orders[1]);
    const settled = await ok<{ txHash: string | null }>(x, 'auctions/run', {});
    assert.ok(settled.txHash);
    assert.notEqual(await balance(), wethBefore);

    await ok(x, 'revert', { id });
    const gone = await fetch(`${x.orderBookUrl}/api/v1/orders/${uid}`);
    assert.equal(gone.status, 404);
    assert.equal(((await gone.json()) as { errorType: string }).errorType, 'NotFound');
    assert.equal(await balance(), wethBefore);
    assert.equal(await client.getBalance({ address: a!.address }), ethBefore);
    assert.equal(await nonce(), nonceBefore);
    assert.equal(await send(x, orders[0]), uid, 'placed again: 201 with the same UID');
    // the node keeps working: the same id reverts again
    await ok(x, 'revert', { id });
    assert.equal((await fetch(`${x.orderBookUrl}/api/v1/orders/${uid}`)).status, 404);
  });

  it('time moves the chain (and the order book) forward: a passed order reads expired', async () => {
    const orders = await crossingOrders(x);
    const uid = await send(x, orders[0]);
    const head = await rpc<{ timestamp: Hex }>(x, 'eth_getBlockByNumber', ['latest', false]);
    const moved = await ok<{ timestamp: number }>(x, 'time', { increase: 7200 });
    assert.ok(moved.timestamp >= Number(BigInt(head.timestamp)) + 7200);
    assert.equal((await sdk(x).getOrder(uid)).status, 'expired');
  });

  it('refuses bad requests in the order book envelope', async () => {
    const zero = await control<{ errorType: string }>(x, 'mine', { blocks: 0 });
    assert.equal(zero.status, 400);
    assert.equal(zero.body.errorType, 'InvalidParameter');
    const unknown = await control<{ errorType: string; description: string }>(x, 'revert', { id: '999' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.errorType, 'SnapshotNotFound');
    const docs = (await (await fetch(`${x.url}/docs/json`)).json()) as { paths: Record<string, unknown> };
    for (const path of ['snapshot', 'revert', 'mine', 'time', 'auctions', 'auctions/run']) assert.ok(docs.paths[`/devnet/control/${path}`], `${path} is documented`);
  });
});
