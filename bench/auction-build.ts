/**
 * Auction building (issue 6): building the auction of 10,000 open orders — the indexed solvable-orders query
 * (with executed amounts, presignatures, quotes), one multicall of balances and allowances for every
 * (owner, sell token) pair at the block, native prices of the tokens (read cold: no price cache), filtering, and
 * storing it as the current auction (the JSON GET /api/v1/auction serves) — against a plain SELECT of the same
 * order rows, same run, same PGlite and devnet; twice: without fee policies, and with production's schedule
 * (issue 23: every order's policies worked out in every auction). Runs alternate; the figures are medians.
 *
 * Set-up: 100 owners holding and approving two sell tokens each (minted by the devnet's deployer; approvals sent
 * by impersonation), 10,000 orders inserted directly (the builder does not check signatures), 10 % of them
 * partially fillable with an indexed partial fill.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { encodeFunctionData, maxUint256, numberToHex, parseAbi, type Address, type Hex } from 'viem';
import { sql } from 'kysely';
import { startTestApp } from '../test/fixtures/app.js';
import { AuctionBuilder } from '../src/auction/build-auction.js';
import { AuctionStore } from '../src/auction/auction-store.js';
import { DEFAULT_FEE_SCHEDULE } from '../src/loops.js';
import { AmmNativePrice } from '../src/orderbook/pricing/amm-native-price.js';
import { toBytes, toNumeric } from '../src/db/codec.js';
import type { Figure } from './figure.js';

const ORDERS = 10_000;
const OWNERS = 100;
const RUNS = 5;
const TOKEN_ABI = parseAbi(['function mint(address to, uint256 amount)', 'function approve(address spender, uint256 amount) returns (bool)']);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function benchAuctionBuild(): Promise<Figure[]> {
  const app = await startTestApp();
  try {
    const network = app.networks[0]!;
    const db = app.database.db;
    const d = app.devnet!.describe();
    const rpcUrl = app.devnet!.rpcUrl;
    let id = 1;
    const batch = async (calls: Array<{ method: string; params: unknown[] }>): Promise<unknown[]> => {
      if (calls.length === 0) return [];
      const body = calls.map((c) => ({ jsonrpc: '2.0', id: id++, ...c }));
      const res = (await (await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Array<{ id: number; result?: unknown; error?: { message: string } }>;
      const byId = new Map(res.map((r) => [r.id, r]));
      return body.map((b) => {
        const r = byId.get(b.id)!;
        if (r.error) throw new Error(`${b.method}: ${r.error.message}`);
        return r.result;
      });
    };

    // ---- owners with balances and approvals -------------------------------------------------------------------
    const sellable = d.tokens.filter((t) => t.symbol !== 'WETH').map((t) => t.address.toLowerCase() as Address);
    const all = d.tokens.map((t) => t.address.toLowerCase() as Address);
    const owners = Array.from({ length: OWNERS }, () => `0x${randomBytes(20).toString('hex')}` as Address);
    const tokensOf = (i: number): [Address, Address] => [sellable[i % sellable.length]!, sellable[(i + 1) % sellable.length]!];
    const deployer = d.accounts.find((a) => a.role === 'deployer')!.address;
    let nonce = Number.parseInt((await batch([{ method: 'eth_getTransactionCount', params: [deployer, 'pending'] }]))[0] as string, 16);
    const txs: Array<{ method: string; params: unknown[] }> = [];
    owners.forEach((owner, i) => {
      for (const token of tokensOf(i)) {
        txs.push({ method: 'eth_sendTransaction', params: [{ from: deployer, to: token, nonce: numberToHex(nonce++), gas: numberToHex(150_000), data: encodeFunctionData({ abi: TOKEN_ABI, functionName: 'mint', args: [owner, 10n ** 30n] }) }] });
      }
    });
    await batch(owners.flatMap((o) => [{ method: 'anvil_setBalance', params: [o, numberToHex(10n ** 18n)] }, { method: 'anvil_impersonateAccount', params: [o] }]));
    owners.forEach((owner, i) => {
      tokensOf(i).forEach((token, k) => {
        txs.push({ method: 'eth_sendTransaction', params: [{ from: owner, to: token, nonce: numberToHex(k), gas: numberToHex(100_000), data: encodeFunctionData({ abi: TOKEN_ABI, functionName: 'approve', args: [network.vaultRelayer, maxUint256] }) }] });
      });
    });
    const hashes = (await batch(txs)) as Hex[];
    for (;;) {
      const receipts = (await batch(hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })))) as Array<{ status: string } | null>;
      if (receipts.every((r) => r !== null)) {
        if (receipts.some((r) => r!.status !== '0x1')) throw new Error('a set-up transaction reverted');
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }

    // ---- 10,000 open orders ---------------------------------------------------------------------------------
    const now = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: ORDERS }, (_, i) => {
      const o = i % OWNERS;
      const [a, b] = tokensOf(o);
      const sellToken = i % 2 === 0 ? a : b;
      const buyToken = all.find((t) => t !== sellToken && (i % 3 === 0 ? t === all[0] : t !== all[0]))!;
      return {
        chain_id: 31337,
        uid: randomBytes(56),
        owner: toBytes(owners[o]!),
        created_at: new Date((now - ORDERS + i) * 1000),
        sell_token: toBytes(sellToken),
        buy_token: toBytes(buyToken),
        receiver: null,
        sell_amount: toNumeric(10n ** 6n + BigInt(i)),
        buy_amount: toNumeric(1n + BigInt(i)),
        valid_to: now + 86_400,
        app_data: Buffer.alloc(32),
        fee_amount: '0',
        kind: 'sell' as const,
        partially_fillable: i % 10 === 0,
        signature: randomBytes(65),
        signing_scheme: 'eip712' as const,
        sell_token_balance: 'erc20',
        buy_token_balance: 'erc20',
        class: 'limit' as const,
        settlement_contract: toBytes(network.settlement),
      };
    });
    for (let i = 0; i < rows.length; i += 1000) await db.insertInto('orders').values(rows.slice(i, i + 1000)).execute();
    const fills = rows.filter((r) => r.partially_fillable).map((r, k) => ({
      chain_id: 31337,
      block_number: 1_000_000 + k,
      log_index: 0,
      order_uid: r.uid,
      owner: r.owner,
      sell_token: r.sell_token,
      buy_token: r.buy_token,
      sell_amount: '1000',
      buy_amount: '1',
      fee_amount: '0',
      tx_hash: randomBytes(32),
    }));
    for (let i = 0; i < fills.length; i += 1000) await db.insertInto('trades').values(fills.slice(i, i + 1000)).execute();
    await sql`analyze`.execute(db);

    // ---- measure --------------------------------------------------------------------------------------------
    const nativePrices = new AmmNativePrice({ client: network.client as never, factory: network.amm!.factory, wrappedNative: network.wrappedNative!, connectors: network.connectors, ttlMs: 0 });
    // without fee policies, and with them on (issue 23): production's documented schedule, for every order of every auction
    const builderOf = (fees: typeof DEFAULT_FEE_SCHEDULE | null) => new AuctionBuilder({ chainId: 31337, db, reader: network.reader, settlement: network.settlement, vaultRelayer: network.vaultRelayer, nativePrices, fees });
    const sides = [
      { name: 'auction-build-no-fees', what: 'fee policies off', builder: builderOf(null), buildMs: [] as number[], totalMs: [] as number[] },
      { name: 'auction-build', what: 'fee policies on (production schedule)', builder: builderOf(DEFAULT_FEE_SCHEDULE), buildMs: [] as number[], totalMs: [] as number[] },
    ];
    const store = new AuctionStore(db, 31337);
    const block = await network.client.getBlock({ blockTag: 'latest' });
    const plainSelect = () => sql`select * from orders where chain_id = ${31337} and cancellation_timestamp is null and valid_to >= ${now}`.execute(db);

    const selectMs: number[] = [];
    // one warm-up round, then alternate the three sides
    for (let run = -1; run < RUNS; run++) {
      for (const side of sides) {
        const t0 = performance.now();
        const built = await side.builder.build({ number: block.number!, timestamp: block.timestamp });
        const t1 = performance.now();
        await store.save(built.auction);
        const t2 = performance.now();
        const included = built.auction.orders.length;
        if (included !== ORDERS) throw new Error(`only ${included} of ${ORDERS} orders made it into the auction (${built.excluded.length} excluded)`);
        if (run < 0) continue;
        side.buildMs.push(t1 - t0);
        side.totalMs.push(t2 - t0);
      }
      const t3 = performance.now();
      const selected = await plainSelect();
      const t4 = performance.now();
      if (selected.rows.length !== ORDERS) throw new Error(`the plain select returned ${selected.rows.length} rows`);
      if (run >= 0) selectMs.push(t4 - t3);
    }
    const baseline = median(selectMs);
    return sides.map((side) => ({
      name: side.name,
      value: median(side.totalMs),
      unit: `ms per auction of 10,000 open orders, ${side.what} (query + balances multicall + native prices + filter + store)`,
      baseline,
      baselineUnit: 'ms (plain SELECT * of the same 10,000 order rows)',
      ratio: median(side.totalMs) / baseline,
      note: `median of ${RUNS}; build without storing ${median(side.buildMs).toFixed(0)} ms; ${OWNERS * 2} (owner, token) pairs in one multicall; lower ratio is better`,
    }));
  } finally {
    await app.stop();
  }
}
