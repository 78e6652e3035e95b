/**
 * Settlement safety on the real devnet (issue 14, points 5–8): a whole node (its indexer) plus an auction loop
 * wired by the composition root's `wireAuctionLoop`, with a short deadline (3 blocks) so that stuck
 * transactions are replaced within a test. Anvil's RPC makes transactions pending (mining off) or stuck (a base
 * fee raised above what they pay).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createWalletClient, encodeFunctionData, http, maxUint256, parseAbi, TransactionReceiptNotFoundError, type Address, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call, makeOrder, orderBody, signOrder } from './fixtures/orders.js';
import { waitFor as waitForValue } from './fixtures/wait-for.js';
import type { RunningAuctionLoop } from '../src/auction/auction-loop.js';
import { watchIndexedRanges } from '../src/auction/indexed-ranges.js';
import { competitionV2 } from '../src/auction/competition-store.js';
import { wireAuctionLoop } from '../src/loops.js';
import { UNISWAP_V2_ROUTER_ABI } from '../src/orderbook/pricing/uniswap-v2-estimator.js';
import { ROUTER_SWAP_ABI } from '../src/solver/amm-router.js';
import { BUY_ETH_ADDRESS } from '../src/protocol/index.js';
import { toBytes, toHex } from '../src/db/codec.js';
import type { ChainNetwork } from '../src/chain/network.js';

const ERC20 = parseAbi(['function approve(address, uint256) returns (bool)', 'function transfer(address, uint256) returns (bool)']);
const E18 = 10n ** 18n;
const DEADLINE_BLOCKS = 3;

describe('settlement safety', () => {
  let app: TestApp;
  let network: ChainNetwork;
  let trader0: LocalAccount;
  let trader1: LocalAccount;
  let WETH: Address;
  let USDC: Address;
  let DAI: Address;
  let loop: RunningAuctionLoop;
  let stopLoop: () => Promise<void>;
  const outer = new AbortController();
  const db = () => app.database.db;
  const waitFor = <T,>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000) => waitForValue(what, probe, timeoutMs, 250);

  const rpc = async <T,>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(app.devnet!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };

  function startLoop(): void {
    const own = new AbortController();
    outer.signal.addEventListener('abort', () => own.abort(), { once: true });
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    loop = wireAuctionLoop({
      network,
      db: db(),
      nativePrices: app.orderBooks.get('devnet')!.nativePrices,
      logger,
      signal: own.signal,
      indexer: watchIndexedRanges({ db: db(), chainId: 31337, signal: own.signal, pollMs: 200 }),
      deadlineBlocks: DEADLINE_BLOCKS,
      exclusionBlocks: 1_000,
    });
    const current = loop;
    stopLoop = async () => {
      own.abort();
      await current.stop();
    };
  }

  /** Stops block production and waits until the loop is done with the last block. */
  const pauseMining = async () => {
    await rpc('evm_setIntervalMining', [0]);
    const head = Number(await network.client.getBlockNumber({ cacheTime: 0 }));
    await waitFor('the loop done with the head', async () => (loop.last && loop.last.auction.block >= head ? true : null));
    await loop.idle();
  };
  const resumeMining = () => rpc('evm_setIntervalMining', [1]);

  async function send(account: LocalAccount, to: Address, data: Hex): Promise<Hex> {
    const wallet = createWalletClient({ account, chain: network.client.chain, transport: http(app.devnet!.rpcUrl) });
    const hash = await wallet.sendTransaction({ account, chain: network.client.chain, to, data, gas: 300_000n });
    const receipt = await network.client.waitForTransactionReceipt({ hash, pollingInterval: 200 });
    assert.equal(receipt.status, 'success', `transaction ${hash} reverted`);
    return hash;
  }

  async function marketOut(amountIn: bigint, path: Address[]): Promise<bigint> {
    const amounts = await network.client.readContract({ address: network.amm!.router, abi: UNISWAP_V2_ROUTER_ABI, functionName: 'getAmountsOut', args: [amountIn, path] });
    return amounts[amounts.length - 1]!;
  }

  async function place(account: LocalAccount, params: Parameters<typeof makeOrder>[0]): Promise<Hex> {
    const order = makeOrder({ validTo: Math.floor(Date.now() / 1000) + 900, ...params });
    const res = await call(app.baseUrl, 'POST', '/devnet/api/v1/orders', orderBody(order, await signOrder(account, order), 'eip712', account.address));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Hex;
  }

  const getOrder = async (uid: Hex) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/orders/${uid}`)).body;
  const fulfilled = (uid: Hex) => async () => ((await getOrder(uid)).status === 'fulfilled' ? true : null);
  const tradesOf = async (uid: Hex) => (await call(app.baseUrl, 'GET', `/devnet/api/v1/trades?orderUid=${uid}`)).body as Array<{ txHash: Hex; blockNumber: number }>;
  const events = async (uid: Hex) =>
    (await db().selectFrom('order_events').select(['label', 'reason']).where('chain_id', '=', 31337).where('order_uid', '=', toBytes(uid)).orderBy('id').execute()).map((e) => (e.reason ? `${e.label}:${e.reason}` : e.label));
  const submissionsOf = async (uid: Hex) =>
    (await db().selectFrom('competition_settlements').selectAll().where('chain_id', '=', 31337).orderBy('auction_id').execute()).filter((r) => r.order_uids.some((u) => toHex(u) === uid));

  before(async () => {
    app = await startTestApp({});
    network = app.networks[0];
    const d = app.devnet!.describe();
    const traders = d.accounts.filter((a) => a.role === 'trader');
    trader0 = privateKeyToAccount(traders[0].privateKey);
    trader1 = privateKeyToAccount(traders[1].privateKey);
    const token = (symbol: string) => d.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address;
    [WETH, USDC, DAI] = [token('WETH'), token('USDC'), token('DAI')];
    startLoop();
    await waitFor('a first auction', async () => loop.last);
  });

  after(async () => {
    outer.abort();
    await stopLoop?.();
    await app?.stop();
  });

  it('finds the order that makes the batch revert, excludes it with an order event, and settles the rest in the same auction (point 5)', async () => {
    const daiIn = 300n * E18;
    const ethOut = await marketOut(daiIn, [DAI, WETH]);
    const daiOut = await marketOut(E18 / 5n, [WETH, DAI]);
    const usdcOut = await marketOut(E18 / 5n, [WETH, USDC]);
    await pauseMining();
    let good0: Hex;
    let good1: Hex;
    let bad: Hex;
    try {
      good0 = await place(trader0, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 5n, buyAmount: (daiOut * 95n) / 100n });
      good1 = await place(trader1, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 5n, buyAmount: (usdcOut * 95n) / 100n });
      // ETH paid to a receiver that cannot take it (a token contract): the settlement's payout reverts; the
      // auction cannot see it (balance, allowance and signature are fine)
      bad = await place(trader0, { sellToken: DAI, buyToken: BUY_ETH_ADDRESS, sellAmount: daiIn, buyAmount: (ethOut * 95n) / 100n, receiver: USDC });
    } finally {
      await resumeMining();
    }
    await waitFor('the good orders fulfilled', async () => (await fulfilled(good0)()) && (await fulfilled(good1)()));
    const [t0] = await tradesOf(good0);
    const [t1] = await tradesOf(good1);
    assert.equal(t0.txHash, t1.txHash, 'one settlement for the rest of the batch');
    const excluded = (await events(bad)).find((e) => e.startsWith('filtered:simulation_failed'));
    assert.ok(excluded, `an order event says why: ${JSON.stringify(await events(bad))}`);
    assert.equal((await tradesOf(bad)).length, 0);
    // the same auction: the one that offered the bad order settled the others
    const settled = await db().selectFrom('competition_settlements').select('auction_id').where('tx_hash', '=', toBytes(t0.txHash)).executeTakeFirstOrThrow();
    const competition = competitionV2((await loop.competitions.byAuctionId(Number(settled.auction_id)))!) as { auction: { orders: Hex[] }; solutions: Array<{ isWinner: boolean; filteredOut: boolean; orders: Array<{ id: Hex }> }> };
    assert.ok(competition.auction.orders.includes(bad), 'the bad order was in the auction that settled the others');
    const winner = competition.solutions.find((s) => s.isWinner)!;
    assert.deepEqual(winner.orders.map((o) => o.id).sort(), [good0, good1].sort());
    assert.ok(competition.solutions.some((s) => s.filteredOut && s.orders.some((o) => o.id === bad)), 'the failing solution stays in the record, filtered out');
    // and it stays out for a while
    const later = await waitFor('a later auction', async () => (loop.last && loop.last.auction.id > Number(settled.auction_id) + 1 ? loop.last : null));
    assert.ok(!later.auction.orders.some((o) => o.uid === bad));
  });

  it('settles within the slippage when a market swap on the same pool lands first (point 6)', async () => {
    const amount = E18 / 2n;
    const out = await marketOut(amount, [WETH, DAI]);
    await send(trader1, WETH, encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [network.amm!.router, maxUint256] }));
    let uid: Hex | null = null;
    let front: Hex | null = null;
    loop.driver!.hooks.beforeSend = async (plan) => {
      if (!uid || front || !plan.solution.trades.some((t) => t.order.uid === uid)) return;
      // after the simulation: someone else sells WETH for DAI on the same pool, moving the price against the order
      const args = [E18 / 20n, 0n, [WETH, DAI], trader1.address, 2n ** 32n - 1n] as const;
      front = await send(trader1, network.amm!.router, encodeFunctionData({ abi: ROUTER_SWAP_ABI, functionName: 'swapExactTokensForTokens', args: args as never }));
    };
    try {
      uid = await place(trader0, { sellToken: WETH, buyToken: DAI, sellAmount: amount, buyAmount: (out * 97n) / 100n });
      await waitFor('the order fulfilled', fulfilled(uid));
    } finally {
      loop.driver!.hooks.beforeSend = undefined;
    }
    assert.ok(front, 'the market swap was sent between simulation and settlement');
    const moved = await marketOut(amount, [WETH, DAI]);
    assert.ok(moved < out, 'the pool moved against the order');
    const frontReceipt = await network.client.getTransactionReceipt({ hash: front });
    const [trade] = await tradesOf(uid);
    assert.ok(Number(frontReceipt.blockNumber) < trade.blockNumber, 'the market swap landed first');
    const subs = await submissionsOf(uid);
    assert.deepEqual(subs.map((s) => s.status).filter((s) => s === 'reverted'), [], 'the settlement did not revert');
  });

  it('treats a transaction without a receipt as pending after a restart; its order stays held until it lands (points 7, 8)', async () => {
    const out = await marketOut(E18 / 10n, [WETH, USDC]);
    await pauseMining();
    let uid: Hex;
    try {
      uid = await place(trader0, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, buyAmount: (out * 95n) / 100n });
      const report = await loop.runOnce();
      assert.ok(report?.winner && report.settlement, 'a settlement was submitted');
      const sent = await waitFor('the transaction recorded with its nonce', async () => {
        const [s] = await submissionsOf(uid);
        return s?.tx_hash && s.nonce !== null ? s : null;
      });
      assert.equal(sent.status, 'pending');
      // the process stops (or loses leadership) while the transaction waits in the mempool
      await stopLoop();
      startLoop();
      const again = await loop.runOnce();
      assert.ok(again, 'the new loop ran an auction');
      const [after] = await submissionsOf(uid);
      assert.equal(after.status, 'pending', 'no receipt yet: still pending, not dropped');
      assert.ok(!again.auction.orders.some((o) => o.uid === uid), 'its order is not offered again');
      assert.equal((await submissionsOf(uid)).length, 1, 'not sent twice');
    } finally {
      await resumeMining();
    }
    await waitFor('the order fulfilled', fulfilled(uid));
    const landed = await waitFor('the submission resolved', async () => {
      const [s] = await submissionsOf(uid);
      return s && s.status !== 'pending' ? s : null;
    });
    assert.ok(['mined', 'settled'].includes(landed.status));
    assert.equal((await tradesOf(uid)).length, 1);
  });

  it('replaces a stuck transaction with the same nonce and a higher fee (point 7)', async () => {
    const out = await marketOut(E18 / 10n, [WETH, USDC]);
    await pauseMining();
    let uid: Hex;
    let base: bigint | null = null;
    try {
      uid = await place(trader1, { sellToken: WETH, buyToken: USDC, sellAmount: E18 / 10n, buyAmount: (out * 95n) / 100n });
      await loop.runOnce();
      const first = await waitFor('the transaction recorded', async () => {
        const [s] = await submissionsOf(uid);
        return s?.tx_hash ? s : null;
      });
      // the next blocks cost far more than the transaction offers: it is stuck
      base = (await network.client.getBlock()).baseFeePerGas!;
      await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(base * 1000n + 10n ** 12n).toString(16)}`]);
      await rpc('evm_mine');
      // not mined: the node answers that it has no receipt (any other failure is not "not mined")
      const receiptOrNull = (hash: Hex) => network.client.getTransactionReceipt({ hash }).catch((err: unknown) => {
        if (err instanceof TransactionReceiptNotFoundError) return null;
        throw err;
      });
      assert.equal(await receiptOrNull(toHex(first.tx_hash!)), null, 'not mined at that base fee');
      // blocks pass without it; after the deadline the driver replaces it
      const replaced = await waitFor('a replacement', async () => {
        await rpc('evm_mine');
        const [s] = await submissionsOf(uid);
        return s && s.tx_hashes.length >= 2 ? s : null;
      });
      assert.equal(Number(replaced.nonce), Number(first.nonce), 'same nonce');
      assert.deepEqual(toHex(replaced.tx_hashes[0]!), toHex(first.tx_hash!));
      const resolved = await waitFor('the replacement mined', async () => {
        await rpc('evm_mine');
        const [s] = await submissionsOf(uid);
        return s && s.status !== 'pending' ? s : null;
      });
      assert.ok(['mined', 'settled'].includes(resolved.status), resolved.status);
      const landedHash = toHex(resolved.tx_hash!);
      assert.equal(landedHash, toHex(replaced.tx_hashes[1]!), 'the replacement landed');
      const landed = await network.client.getTransaction({ hash: landedHash });
      assert.equal(landed.nonce, Number(first.nonce));
      assert.ok(landed.maxFeePerGas! > BigInt(first.max_fee_per_gas!), 'a higher fee');
      assert.equal(await receiptOrNull(toHex(first.tx_hash!)), null, 'the original never landed');
    } finally {
      // the base fee back where it was: left raised, the next test's settlement waited some 25 blocks for it to
      // decay before it was sent
      if (base !== null) await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${base.toString(16)}`]);
      await resumeMining();
    }
    await waitFor('the order fulfilled', fulfilled(uid));
    assert.equal((await tradesOf(uid)).length, 1);
  });

  it('records a reverted settlement in its competition and does not resend the same solution (point 7)', async () => {
    const owner = trader1;
    const out = await marketOut(E18 / 10n, [WETH, DAI]);
    let uid: Hex | null = null;
    let sabotaged = false;
    const balance = await network.client.readContract({ address: WETH, abi: parseAbi(['function balanceOf(address) view returns (uint256)']), functionName: 'balanceOf', args: [owner.address] });
    loop.driver!.hooks.beforeSend = async (plan) => {
      if (!uid || sabotaged || !plan.solution.trades.some((t) => t.order.uid === uid)) return;
      sabotaged = true;
      // after the simulation passed: the owner moves its WETH away, so the settlement reverts on chain
      await send(owner, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [trader0.address, balance] }));
    };
    try {
      uid = await place(owner, { sellToken: WETH, buyToken: DAI, sellAmount: E18 / 10n, buyAmount: (out * 95n) / 100n });
      const reverted = await waitFor('the reverted submission', async () => (await submissionsOf(uid!)).find((s) => s.status === 'reverted') ?? null);
      const txHash = toHex(reverted.tx_hash!);
      const record = competitionV2((await loop.competitions.byTxHash(txHash))!) as { solutions: Array<{ isWinner: boolean; settlement: { status: string; txHash: Hex; reason: string } | null }> };
      const winner = record.solutions.find((s) => s.isWinner)!;
      assert.equal(winner.settlement?.status, 'reverted', 'the competition record says the winner reverted');
      assert.equal(winner.settlement?.txHash, txHash);
      assert.ok(winner.settlement?.reason);
      // the funds come back at once: the same solution simulates again, but is not resent for a while
      await send(trader0, WETH, encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [owner.address, balance] }));
      const refused = await waitFor('the same solution refused', async () => {
        const r = loop.last?.ranked.find((x) => x.solution.trades.some((t) => t.order.uid === uid) && x.reason?.includes('reverted on chain'));
        return r ?? null;
      });
      assert.ok(refused.filteredOut);
      assert.equal((await submissionsOf(uid)).length, 1, 'no second submission of the same solution');
    } finally {
      loop.driver!.hooks.beforeSend = undefined;
    }
    // after the cooldown (blocks: mined here rather than waited for) it may settle
    await waitFor('the order fulfilled', async () => {
      await rpc('evm_mine');
      return fulfilled(uid!)();
    });
  });
});
