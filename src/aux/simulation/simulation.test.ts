/**
 * POST /{chainId}/simulation/simulateBundle and GET /{chainId}/simulation/{id} against a real devnet (anvil with
 * interval mining, the real tokens and demo accounts) and a real PGlite database. Every simulation runs on its
 * own anvil fork; the tests check that the live chain is left exactly as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import {
  encodeAbiParameters,
  encodeFunctionData,
  keccak256,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { findFreePort } from '../../chain/devnet/index.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { execFileSync } from 'node:child_process';
import { ForkSimulator } from './fork-simulator.js';
import { registerSimulationRoutes } from './routes.js';
import type { SimulationResultJson, StoredRunJson } from './schemas.js';
import { createSimulator, type BundleSimulator } from './simulator.js';
import { SimulationFailedError, SimulationUnavailableError, type Simulator } from './types.js';
import { skipUnless } from '../../../test/fixtures/required-services.js';

const erc20 = parseAbi([
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
  'function deposit() payable',
]);
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const SPENDER = '0x000000000000000000000000000000000000beef' as Address;
const THIRD = '0x0000000000000000000000000000000000c0ffee' as Address;
const psSkip = await skipUnless('ps');
/** anvil forks (`--fork-url`) still running as children of this test process */
function liveForkCount(): number {
  let children: string;
  try {
    children = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch (err) {
    if ((err as { status?: number }).status === 1) return 0; // ps found no child at all
    throw err;
  }
  return children.split('\n').filter((line) => line.includes('--fork-url')).length;
}
const word = (v: bigint): Hex => `0x${v.toString(16).padStart(64, '0')}`;
/** DevnetToken storage: balanceOf at slot 3, allowance at slot 4 */
const balanceSlot = (holder: Address) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder, 3n]));
const allowanceSlot = (owner: Address, spender: Address) =>
  keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'bytes32' }], [spender, keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [owner, 4n]))]));

async function buildServer(db: Database, simulator: BundleSimulator, chains: Map<number, { rpcUrl: string; wrappedNative?: Address | null }>): Promise<HttpServer> {
  const server = await buildHttpServer({
    logger: pino({ level: 'silent' }),
    rateLimit: { quote: 0, orders: 0, other: 0 },
    readiness: [],
    version: 'test',
  });
  registerSimulationRoutes(server, { chains, simulator, db: db.db, publicBaseUrl: 'http://batchbook.test/' });
  await server.ready();
  return server;
}

describe('simulation API on the devnet', () => {
  let chain: TestDevnet;
  let database: Database;
  let simulator: BundleSimulator;
  let server: HttpServer;
  let traderA: Address;
  let traderB: Address;
  let usdc: Address;
  let weth: Address;
  let deadRpc: string;

  const read = async (token: Address, fn: 'balanceOf' | 'allowance', args: readonly Address[]): Promise<bigint> =>
    BigInt(await chain.rpc<Hex>('eth_call', [{ to: token, data: encodeFunctionData({ abi: erc20, functionName: fn, args: args as never }) }, 'latest']));
  const post = (chainId: number, body: unknown, srv: HttpServer = server) =>
    srv.inject({ method: 'POST', url: `/${chainId}/simulation/simulateBundle`, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const approve = (from: Address, spender: Address, amount: bigint) => ({ from, to: usdc, input: encodeFunctionData({ abi: erc20, functionName: 'approve', args: [spender, amount] }) });
  const transfer = (from: Address, to: Address, amount: bigint) => ({ from, to: usdc, input: encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [to, amount] }) });

  before(async () => {
    [chain, database] = await Promise.all([startTestDevnet({ blockTime: 1 }), openDatabase({ kind: 'pglite', dataDir: null })]);
    const d = chain.devnet.describe();
    const traders = d.accounts.filter((a) => a.role === 'trader');
    traderA = traders[0]!.address.toLowerCase() as Address;
    traderB = traders[1]!.address.toLowerCase() as Address;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
    weth = d.contracts.weth.toLowerCase() as Address;
    deadRpc = `http://127.0.0.1:${await findFreePort()}`; // nothing listens there
    simulator = createSimulator({ timeoutMs: 60_000, outboundTimeoutMs: 10_000 });
    server = await buildServer(
      database,
      simulator,
      new Map([
        [31337, { rpcUrl: chain.rpcUrl, wrappedNative: weth }],
        [1, { rpcUrl: deadRpc }],
      ]),
    );
  });

  after(async () => {
    await server?.close();
    await simulator?.stop();
    await database?.close();
    await chain?.stop();
    if (!psSkip) assert.equal(liveForkCount(), 0, 'every fork was stopped'); // counted with ps
  });

  it('simulates approve + transfer from a demo trader without touching the chain', async () => {
    const amount = 1_234_567n;
    const balanceA = await read(usdc, 'balanceOf', [traderA]);
    const balanceB = await read(usdc, 'balanceOf', [traderB]);
    const nonceA = await chain.rpc<Hex>('eth_getTransactionCount', [traderA, 'latest']);
    assert.ok(balanceA > amount);
    assert.equal(await read(usdc, 'allowance', [traderA, SPENDER]), 0n);

    const res = await post(31337, [approve(traderA, SPENDER, amount), transfer(traderA, traderB, amount)]);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as SimulationResultJson;
    // the same bundle again, now on a pooled fork (reset instead of started): the same result (timings: npm run bench simulation)
    const warm = await post(31337, [approve(traderA, SPENDER, amount), transfer(traderA, traderB, amount)]);
    assert.equal(warm.statusCode, 200);
    assert.deepEqual((warm.json() as SimulationResultJson).cumulativeBalancesDiff, result.cumulativeBalancesDiff);

    assert.equal(result.status, true);
    assert.equal(result.provider, 'fork');
    assert.deepEqual(result.cumulativeBalancesDiff, { [traderA]: { [usdc]: (-amount).toString() }, [traderB]: { [usdc]: amount.toString() } });
    const slot = (key: Hex) => result.stateDiff.find((c) => c.address === usdc && c.key === key);
    assert.deepEqual(slot(balanceSlot(traderA)), { address: usdc, key: balanceSlot(traderA), original: word(balanceA), updated: word(balanceA - amount) });
    assert.deepEqual(slot(balanceSlot(traderB)), { address: usdc, key: balanceSlot(traderB), original: word(balanceB), updated: word(balanceB + amount) });
    assert.deepEqual(slot(allowanceSlot(traderA, SPENDER)), { address: usdc, key: allowanceSlot(traderA, SPENDER), original: word(0n), updated: word(amount) });
    assert.equal(result.stateDiff.length, 3, JSON.stringify(result.stateDiff));
    assert.ok(BigInt(result.gasUsed) > 21_000n * 2n);
    assert.equal(BigInt(result.gasUsed), BigInt(result.transactions[0]!.gasUsed) + BigInt(result.transactions[1]!.gasUsed));
    assert.deepEqual(result.transactions.map((t) => t.outcome), ['success', 'success']);
    assert.equal(result.failedTransactionIndex, null);
    assert.equal(result.revertReason, null);
    assert.ok(result.blockNumber !== null && result.blockNumber > 0);
    assert.match(result.link, new RegExp(`^http://batchbook\\.test/31337/simulation/${result.id}$`));

    // the live chain is untouched: balances, allowance, nonce
    await new Promise((r) => setTimeout(r, 1_200)); // at least one more block on the live devnet
    assert.equal(await read(usdc, 'balanceOf', [traderA]), balanceA);
    assert.equal(await read(usdc, 'balanceOf', [traderB]), balanceB);
    assert.equal(await read(usdc, 'allowance', [traderA, SPENDER]), 0n);
    assert.equal(await chain.rpc<Hex>('eth_getTransactionCount', [traderA, 'latest']), nonceA);

    // the link shows the stored run
    const stored = await server.inject({ method: 'GET', url: new URL(result.link).pathname });
    assert.equal(stored.statusCode, 200, stored.body);
    const run = stored.json() as StoredRunJson;
    assert.equal(run.id, result.id);
    assert.equal(run.chainId, 31337);
    assert.deepEqual(run.result, result);
    assert.deepEqual(run.request.map((t) => [t.from, t.to, t.value]), [
      [traderA, usdc, '0'],
      [traderA, usdc, '0'],
    ]);
    assert.ok(!Number.isNaN(Date.parse(run.createdAt)));
  });

  it('reports the failing transaction and its revert reason, and stops there', async () => {
    const balanceA = await read(usdc, 'balanceOf', [traderA]);
    const res = await post(31337, [approve(traderA, SPENDER, 5n), transfer(traderA, traderB, balanceA + 1n), transfer(traderA, traderB, 1n)]);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as SimulationResultJson;
    assert.equal(result.status, false);
    assert.equal(result.failedTransactionIndex, 1);
    assert.equal(result.revertReason, 'DevnetToken: insufficient balance');
    assert.deepEqual(result.transactions.map((t) => t.outcome), ['success', 'reverted', 'not_executed']);
    assert.equal(result.transactions[1]!.revertReason, 'DevnetToken: insufficient balance');
    assert.match(result.transactions[1]!.revertData ?? '', /^0x08c379a0/);
    assert.ok(BigInt(result.transactions[1]!.gasUsed) > 21_000n, 'a mined revert still uses gas');
    assert.equal(result.transactions[2]!.gasUsed, '0');
    // only the approval changed anything
    assert.deepEqual(result.cumulativeBalancesDiff, {});
    assert.deepEqual(result.stateDiff, [{ address: usdc, key: allowanceSlot(traderA, SPENDER), original: word(0n), updated: word(5n) }]);
    assert.equal(BigInt(result.gasUsed), BigInt(result.transactions[0]!.gasUsed) + BigInt(result.transactions[1]!.gasUsed));
  });

  it('reports a transaction refused before execution (value above the balance)', async () => {
    const poor = '0x0000000000000000000000000000000000001234' as Address;
    const res = await post(31337, [{ from: poor, to: traderB, input: '0x', value: parseEther('1').toString() }]);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as SimulationResultJson;
    assert.equal(result.status, false);
    assert.equal(result.failedTransactionIndex, 0);
    assert.equal(result.transactions[0]!.outcome, 'rejected');
    assert.match(result.revertReason ?? '', /insufficient funds/i);
  });

  it('reports native value transfers without gas costs, also when a gas price is given', async () => {
    const value = parseEther('1.5');
    const ethA = BigInt(await chain.rpc<Hex>('eth_getBalance', [traderA, 'latest']));
    for (const gasPrice of [undefined, '1000000000']) {
      const res = await post(31337, [{ from: traderA, to: traderB, input: '0x', value: value.toString(), ...(gasPrice ? { gas_price: gasPrice } : {}) }]);
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json() as SimulationResultJson;
      assert.equal(result.status, true);
      assert.equal(result.gasUsed, '21000');
      assert.deepEqual(result.cumulativeBalancesDiff, { [traderA]: { [NATIVE]: (-value).toString() }, [traderB]: { [NATIVE]: value.toString() } }, `gas_price ${gasPrice}`);
    }
    assert.equal(BigInt(await chain.rpc<Hex>('eth_getBalance', [traderA, 'latest'])), ethA, 'the live balance is unchanged');
  });

  it('accepts a contract as the sender (a hook sent by the settlement contract)', async () => {
    const settlement = chain.devnet.describe().contracts.settlement.toLowerCase() as Address;
    const res = await post(31337, [approve(settlement, SPENDER, 9n)]);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as SimulationResultJson;
    assert.equal(result.status, true, JSON.stringify(result.transactions));
    assert.deepEqual(result.stateDiff, [{ address: usdc, key: allowanceSlot(settlement, SPENDER), original: word(0n), updated: word(9n) }]);
  });

  it('counts WETH deposits as balance changes', async () => {
    const res = await post(31337, [{ from: traderA, to: weth, input: encodeFunctionData({ abi: erc20, functionName: 'deposit' }), value: '5000' }]);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as SimulationResultJson;
    assert.equal(result.status, true);
    assert.deepEqual(result.cumulativeBalancesDiff, { [traderA]: { [NATIVE]: '-5000', [weth]: '5000' }, [weth]: { [NATIVE]: '5000' } });
  });

  it('keeps concurrent simulations apart: two bundles spending the same full balance both succeed', async () => {
    const full = await read(usdc, 'balanceOf', [traderA]);
    const [one, two] = await Promise.all([post(31337, [transfer(traderA, traderB, full)]), post(31337, [transfer(traderA, THIRD, full)])]);
    for (const [res, to] of [
      [one, traderB],
      [two, THIRD],
    ] as const) {
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json() as SimulationResultJson;
      assert.equal(result.status, true, JSON.stringify(result.transactions));
      assert.deepEqual(result.cumulativeBalancesDiff, { [traderA]: { [usdc]: (-full).toString() }, [to]: { [usdc]: full.toString() } });
      const slotA = result.stateDiff.find((c) => c.key === balanceSlot(traderA));
      assert.deepEqual(slotA, { address: usdc, key: balanceSlot(traderA), original: word(full), updated: word(0n) });
    }
    assert.equal(await read(usdc, 'balanceOf', [traderA]), full);
  });

  describe('invalid input → 400 naming the field', () => {
    const good = () => transfer(traderA, traderB, 1n);
    const rows: Array<[string, () => unknown, RegExp]> = [
      ['bad from address', () => [{ ...good(), from: '0x1234' }], /body\.0\.from/],
      ['bad to address', () => [good(), { ...good(), to: 'not-an-address' }], /body\.1\.to/],
      ['empty array', () => [], /body.*fewer than 1/],
      ['not an array', () => ({ from: traderA }), /body.*array/],
      ['non-hex input', () => [{ ...good(), input: '0xzz' }], /body\.0\.input/],
      ['odd-length input', () => [{ ...good(), input: '0xabc' }], /body\.0\.input/],
      ['missing input', () => [{ from: traderA, to: usdc }], /body\.0\.input is required/],
      ['decimal value with a point', () => [{ ...good(), value: '1.5' }], /body\.0\.value/],
      ['numeric value', () => [{ ...good(), value: 5 }], /body\.0\.value/],
      ['value above uint256', () => [{ ...good(), value: (2n ** 256n).toString() }], /body\.0\.value: must not exceed/],
      ['negative gas', () => [{ ...good(), gas: -1 }], /body\.0\.gas/],
      ['hex gas_price', () => [{ ...good(), gas_price: '0x10' }], /body\.0\.gas_price/],
      ['too many transactions', () => Array.from({ length: 33 }, good), /body.*more than 32/],
    ];
    for (const [name, body, message] of rows) {
      it(name, async () => {
        const res = await post(31337, body());
        assert.equal(res.statusCode, 400, res.body);
        assert.match((res.json() as { message: string }).message, message);
      });
    }
    it('non-numeric chain id', async () => {
      for (const chainId of ['mainnet', '0']) {
        const res = await server.inject({ method: 'POST', url: `/${chainId}/simulation/simulateBundle`, payload: [good()] });
        assert.equal(res.statusCode, 400, res.body);
        assert.match((res.json() as { message: string }).message, /params\.chainId/);
      }
    });
  });

  it('links relatively without PUBLIC_URL, never to the request’s Host or X-Forwarded-Host', async () => {
    const plain = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    registerSimulationRoutes(plain, { chains: new Map([[31337, { rpcUrl: chain.rpcUrl }]]), simulator, db: database.db });
    try {
      const res = await plain.inject({
        method: 'POST', url: '/31337/simulation/simulateBundle', payload: JSON.stringify([transfer(traderA, traderB, 1n)]),
        headers: { 'content-type': 'application/json', host: 'evil.example', 'x-forwarded-host': 'evil.example' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json() as SimulationResultJson;
      assert.equal(result.link, `/31337/simulation/${result.id}`);
    } finally {
      await plain.close();
    }
  });

  it('applies per-client quotas and a gas budget per bundle', async () => {
    const limited = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test', trustProxy: ['127.0.0.1/32'] });
    registerSimulationRoutes(limited, { chains: new Map([[31337, { rpcUrl: chain.rpcUrl }]]), simulator, db: database.db, options: { clientQuota: { concurrent: 1, perMinute: 1 }, bundleGas: 100_000 } });
    const from = (client: string, body: unknown) =>
      limited.inject({ method: 'POST', url: '/31337/simulation/simulateBundle', payload: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-forwarded-for': client } });
    try {
      const overBudget = await from('198.51.100.7', [{ ...transfer(traderA, traderB, 1n), gas: 60_000 }, { ...transfer(traderA, traderB, 1n), gas: 60_000 }]);
      assert.equal(overBudget.statusCode, 400, overBudget.body);
      assert.match(overBudget.json().message, /120000 gas in total; at most 100000/);
      assert.equal((await from('198.51.100.7', [transfer(traderA, traderB, 1n)])).statusCode, 200);
      const again = await from('198.51.100.7', [transfer(traderA, traderB, 1n)]);
      assert.equal(again.statusCode, 429, again.body);
      assert.match(again.json().message, /per minute/);
      const other = await from('198.51.100.8', [transfer(traderA, traderB, 1n)]);
      assert.equal(other.statusCode, 200, `another client has its own quota: ${other.body}`);
    } finally {
      await limited.close();
    }
  });

  it('keeps the newest stored runs of each client and deletes its older ones (SIMULATION_MAX_STORED_RUNS_PER_CLIENT)', async () => {
    const capped = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test', trustProxy: ['127.0.0.1/32'] });
    registerSimulationRoutes(capped, { chains: new Map([[31337, { rpcUrl: chain.rpcUrl }]]), simulator, db: database.db, options: { maxRunsPerClient: 2 } });
    const from = async (client: string): Promise<string> => {
      const res = await capped.inject({ method: 'POST', url: '/31337/simulation/simulateBundle', payload: JSON.stringify([transfer(traderA, traderB, 1n)]), headers: { 'content-type': 'application/json', 'x-forwarded-for': client } });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as SimulationResultJson).id;
    };
    const stored = async (id: string) => (await capped.inject({ method: 'GET', url: `/31337/simulation/${id}` })).statusCode;
    try {
      const other = await from('203.0.113.9');
      const first = await from('203.0.113.5');
      const second = await from('203.0.113.5');
      assert.equal(await stored(first), 200, 'within the cap every run is kept');
      const third = await from('203.0.113.5');
      assert.equal(await stored(first), 404, 'the oldest run of the client is deleted beyond the cap');
      assert.equal(await stored(second), 200);
      assert.equal(await stored(third), 200);
      assert.equal(await stored(other), 200, 'another client keeps its runs');
    } finally {
      await capped.close();
    }
  });

  it('answers 404 for a chain it does not simulate and for unknown runs', async () => {
    const res = await post(5, [transfer(traderA, traderB, 1n)]);
    assert.equal(res.statusCode, 404);
    assert.match((res.json() as { message: string }).message, /chain 5 is not supported/);
    const unknown = await server.inject({ method: 'GET', url: '/31337/simulation/00000000-0000-4000-8000-000000000000' });
    assert.equal(unknown.statusCode, 404);
    assert.match((unknown.json() as { message: string }).message, /no simulation/);
    const badId = await server.inject({ method: 'GET', url: '/31337/simulation/not-a-uuid' });
    assert.equal(badId.statusCode, 400);
  });

  it('does not show a run under another chain', async () => {
    const res = await post(31337, [transfer(traderA, traderB, 1n)]);
    const { id } = res.json() as SimulationResultJson;
    const elsewhere = await server.inject({ method: 'GET', url: `/1/simulation/${id}` });
    assert.equal(elsewhere.statusCode, 404);
  });

  it('answers 502 when the chain RPC is unreachable', async () => {
    const res = await post(1, [transfer(traderA, traderB, 1n)]);
    assert.equal(res.statusCode, 502, res.body);
    assert.match((res.json() as { message: string }).message, /simulation provider unavailable: the chain's RPC node \(http:\/\/127\.0\.0\.1:\d+\) is unavailable/);
  });

  it('answers 500 when the simulator itself cannot run', async () => {
    const broken = createSimulator({ providers: [new ForkSimulator({ anvilBinaryPath: '/nonexistent/anvil' })] });
    const srv = await buildServer(database, broken, new Map([[31337, { rpcUrl: chain.rpcUrl }]]));
    try {
      const res = await post(31337, [transfer(traderA, traderB, 1n)], srv);
      assert.equal(res.statusCode, 500, res.body);
      assert.match((res.json() as { message: string }).message, /simulation failed: the simulator cannot run/);
    } finally {
      await srv.close();
      await broken.stop();
    }
  });

  it('bounds concurrency: with one slot and no queue a second simulation is refused with 502', async () => {
    const narrow = createSimulator({ maxConcurrent: 1, maxQueued: 0 });
    const srv = await buildServer(database, narrow, new Map([[31337, { rpcUrl: chain.rpcUrl }]]));
    try {
      const [a, b] = await Promise.all([post(31337, [transfer(traderA, traderB, 1n)], srv), post(31337, [transfer(traderA, traderB, 1n)], srv)]);
      assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 502]);
      const refused = [a, b].find((r) => r.statusCode === 502)!;
      assert.match((refused.json() as { message: string }).message, /busy/);
      assert.deepEqual(narrow.load(), { running: 0, queued: 0 });
    } finally {
      await srv.close();
      await narrow.stop();
    }
  });

  it('queues beyond the concurrency limit and times out a run that takes too long', async () => {
    // a simulator that never finishes on its own: only the deadline ends it
    const stuck: Simulator = {
      name: 'stuck',
      simulate: (_req, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    };
    const slow = createSimulator({ providers: [stuck], maxConcurrent: 1, maxQueued: 4, timeoutMs: 300 });
    try {
      const request = { chainId: 31337, rpcUrl: chain.rpcUrl, wrappedNative: null, transactions: [] };
      const runs = [slow.simulate(request), slow.simulate(request)];
      assert.deepEqual(slow.load(), { running: 1, queued: 1 });
      for (const run of runs) await assert.rejects(run, (err: Error) => err instanceof SimulationUnavailableError && /did not finish within 300 ms/.test(err.message));
      assert.deepEqual(slow.load(), { running: 0, queued: 0 });
    } finally {
      await slow.stop();
    }
  });

  it('stop() aborts a running simulation, kills its fork and refuses new ones', async () => {
    const forks = new ForkSimulator();
    const own = createSimulator({ providers: [forks] });
    const request = {
      chainId: 31337,
      rpcUrl: chain.rpcUrl,
      wrappedNative: null,
      transactions: [{ from: traderA, to: usdc, input: transfer(traderA, traderB, 1n).input as Hex, value: 0n, gas: null, gasPrice: null }],
    };
    const running = own.simulate(request);
    // wait until its fork is up
    const deadline = Date.now() + 10_000;
    while (forks.forks() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(forks.forks(), 1, 'a fork was started');
    await own.stop();
    await assert.rejects(running, (err: Error) => err instanceof SimulationUnavailableError && /shutting down/.test(err.message));
    assert.equal(forks.forks(), 0, 'the fork was killed');
    await assert.rejects(own.simulate(request), SimulationUnavailableError);
  });

  it('reuses forks between simulations, reset to the current block, and kills idle ones on stop()', async () => {
    const forks = new ForkSimulator({ idleForks: 1 });
    const own = createSimulator({ providers: [forks] });
    try {
      const request = (amount: bigint) => ({
        chainId: 31337,
        rpcUrl: chain.rpcUrl,
        wrappedNative: null,
        transactions: [{ from: traderA, to: usdc, input: transfer(traderA, traderB, amount).input as Hex, value: 0n, gas: null, gasPrice: null }],
      });
      const full = await read(usdc, 'balanceOf', [traderA]);
      const first = await own.simulate(request(full));
      assert.equal(first.transactions[0]!.outcome, 'success');
      assert.equal(forks.forks(), 1, 'the fork is kept for the next simulation');
      await new Promise((r) => setTimeout(r, 1_100)); // the live chain moves on
      // the same fork again: the first run's transfer of the full balance must be gone
      const second = await own.simulate(request(full));
      assert.equal(second.transactions[0]!.outcome, 'success', second.transactions[0]!.revertReason ?? '');
      assert.ok(second.blockNumber! > first.blockNumber!, `reset to the new head (${first.blockNumber} → ${second.blockNumber})`);
      assert.equal(forks.forks(), 1);
    } finally {
      await own.stop();
    }
    assert.equal(forks.forks(), 0);
  });

  it('starts every run on a pooled fork from the pristine state, also after more runs than the fork keeps spare snapshots', async () => {
    const forks = new ForkSimulator({ idleForks: 1 });
    try {
      const full = await read(usdc, 'balanceOf', [traderA]);
      // the full balance twice per bundle: the second transfer fails unless the fork's state was restored before
      // the run, and the first would fail after an unreverted earlier run
      const request = {
        chainId: 31337,
        rpcUrl: chain.rpcUrl,
        wrappedNative: null,
        transactions: [transfer(traderA, traderB, full), transfer(traderA, THIRD, 1n)].map((t) => ({ from: t.from, to: t.to, input: t.input as Hex, value: 0n, gas: null, gasPrice: null })),
      };
      const json = (o: unknown) => JSON.stringify(o, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Map ? [...v] : v));
      const runs: Array<{ block: number | null; result: string }> = [];
      for (let i = 0; i < 20; i++) {
        const outcome = await forks.simulate(request, new AbortController().signal);
        runs.push({ block: outcome.blockNumber, result: json(outcome.transactions) });
      }
      const first = JSON.parse(runs[0]!.result) as Array<{ outcome: string }>;
      assert.deepEqual(first.map((t) => t.outcome), ['success', 'reverted']);
      // runs at the same block (the live chain mines every second) report exactly the same
      const byBlock = new Map<number | null, string[]>();
      for (const run of runs) byBlock.set(run.block, [...(byBlock.get(run.block) ?? []), run.result]);
      for (const results of byBlock.values()) for (const result of results) assert.equal(result, results[0]);
      assert.ok(Math.max(...[...byBlock.values()].map((r) => r.length)) > 1, 'several runs at one block');
      assert.equal(forks.forks(), 1);
    } finally {
      await forks.close();
    }
  });

  it('ForkSimulator maps a missing binary to SimulationFailedError', async () => {
    const fork = new ForkSimulator({ anvilBinaryPath: '/nonexistent/anvil' });
    await assert.rejects(
      fork.simulate({ chainId: 31337, rpcUrl: chain.rpcUrl, wrappedNative: null, transactions: [] }, new AbortController().signal),
      SimulationFailedError,
    );
  });
});
