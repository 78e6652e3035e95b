/**
 * The Tenderly adapter against a local HTTP server speaking Tenderly's simulate-bundle wire format (the only
 * fake), and its place in the provider chain: when Tenderly fails, the bundle runs on the first-party fork of a
 * real devnet.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { encodeErrorResult, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { findFreePort } from '../../chain/devnet/index.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { buildHttpServer, type HttpServer } from '../../http/server.js';
import { registerSimulationRoutes } from './routes.js';
import type { SimulationResultJson } from './schemas.js';
import { createSimulator, type BundleSimulator } from './simulator.js';
import { TenderlySimulator } from './tenderly-simulator.js';
import { SimulationFailedError, SimulationUnavailableError, type BundleRequest } from './types.js';

const ORG = 'our-org';
const PROJECT = 'our project';
const KEY = 'secret-key';
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const erc20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: { simulations: Array<Record<string, unknown>> };
}

type Mode = 'ok' | 'revert-second' | 'http-500' | 'http-401' | 'hang' | 'garbage';

/** Answers like Tenderly's simulate-bundle: one result per simulation, an ERC-20 or native transfer each. */
function tenderlyAnswer(body: Recorded['body'], mode: Mode) {
  const results = body.simulations.map((sim, i) => {
    const from = String(sim.from);
    const to = String(sim.to);
    const failed = mode === 'revert-second' && i === 1;
    const native = sim.value !== '0';
    return {
      transaction: {
        hash: `0x${String(i).padStart(64, '0')}`,
        block_number: 19_000_000,
        from,
        to,
        gas_used: 30_000 + i,
        status: !failed,
        error_message: failed ? 'execution reverted' : '',
        transaction_info: {
          call_trace: failed
            ? { error: 'execution reverted', error_reason: 'Token: amount exceeds balance', output: encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['Token: amount exceeds balance'] }) }
            : { output: '0x' },
          asset_changes: failed
            ? null
            : [
                native
                  ? { token_info: { standard: 'NativeCurrency', type: 'Native', symbol: 'ETH', decimals: 18 }, type: 'Transfer', from, to: '0x00000000000000000000000000000000000000b0', amount: '0.000000000000001', raw_amount: String(sim.value) }
                  : { token_info: { standard: 'ERC20', type: 'Fungible', contract_address: to, symbol: 'TKN', decimals: 6 }, type: 'Transfer', from, to: '0x00000000000000000000000000000000000000b0', amount: '0.001', raw_amount: '1000' },
                // an NFT move is not a balance amount
                { token_info: { standard: 'ERC721', type: 'NonFungible', contract_address: '0x00000000000000000000000000000000000000f7' }, type: 'Transfer', from, to: '0x00000000000000000000000000000000000000b0', raw_amount: '1' },
                // a mint: no sender
                { token_info: { standard: 'ERC20', type: 'Fungible', contract_address: to }, type: 'Mint', to: from, raw_amount: '5' },
              ],
          state_diff: failed
            ? null
            : [
                {
                  soltype: { name: 'balances', type: 'mapping (address => uint256)' },
                  original: { [from]: '2000' },
                  dirty: { [from]: '1000' },
                  raw: [{ address: to, key: '0x05', original: `0x${(2000 - 1000 * i).toString(16)}`, dirty: `0x${(1000 - 1000 * i + 2000 * i).toString(16)}` }],
                },
              ],
        },
      },
      simulation: { id: `sim-${i}`, project_id: 'p', owner_id: 'o', network_id: String(sim.network_id), block_number: 19_000_000, status: !failed, gas_used: 30_000 + i },
    };
  });
  return { simulation_results: mode === 'revert-second' ? results.slice(0, 2) : results };
}

describe('Tenderly adapter', () => {
  let fake: Server;
  let fakeUrl: string;
  let mode: Mode = 'ok';
  let requests: Recorded[] = [];
  let chain: TestDevnet;
  let database: Database;
  let traderA: Address;
  let traderB: Address;
  let usdc: Address;

  const request = (transactions: BundleRequest['transactions'], chainId = 31337): BundleRequest => ({ chainId, rpcUrl: chain.rpcUrl, wrappedNative: null, transactions });
  const tx = (over: Partial<BundleRequest['transactions'][number]> = {}) => ({
    from: traderA,
    to: usdc,
    input: encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [traderB, 1000n] }) as Hex,
    value: 0n,
    gas: null,
    gasPrice: null,
    ...over,
  });
  const adapter = (timeoutMs = 5_000) => new TenderlySimulator({ apiKey: KEY, projectName: PROJECT, orgName: ORG, baseUrl: fakeUrl, dashboardUrl: 'https://dash.example', timeoutMs });

  async function buildServer(simulator: BundleSimulator): Promise<HttpServer> {
    const server = await buildHttpServer({ logger: pino({ level: 'silent' }), rateLimit: { quote: 0, orders: 0, other: 0 }, readiness: [], version: 'test' });
    registerSimulationRoutes(server, { chains: new Map([[31337, { rpcUrl: chain.rpcUrl }]]), simulator, db: database.db, publicBaseUrl: 'http://batchbook.test' });
    await server.ready();
    return server;
  }

  before(async () => {
    fake = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as Recorded['body'];
        requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (mode === 'hang') return; // never answers
        if (mode === 'http-500') {
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'internal error' } }));
        } else if (mode === 'http-401') {
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { id: 'x', slug: 'invalid_token', message: 'Invalid access token' } }));
        } else if (mode === 'garbage') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"unexpected": true}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tenderlyAnswer(body, mode)));
        }
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    [chain, database] = await Promise.all([startTestDevnet({ blockTime: 1 }), openDatabase({ kind: 'pglite', dataDir: null })]);
    const d = chain.devnet.describe();
    traderA = d.accounts[0]!.address.toLowerCase() as Address;
    traderB = d.accounts[1]!.address.toLowerCase() as Address;
    usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
  });

  beforeEach(() => {
    mode = 'ok';
    requests = [];
  });

  after(async () => {
    fake?.closeAllConnections();
    await new Promise((r) => fake?.close(r));
    await database?.close();
    await chain?.stop();
  });

  it('calls the documented endpoint with X-Access-Key and the bundle body', async () => {
    await adapter().simulate(request([tx(), tx({ value: 7n, gas: 100_000, gasPrice: 3_000_000_000n, input: '0x' })]), new AbortController().signal);
    assert.equal(requests.length, 1);
    const [r] = requests;
    assert.equal(r!.method, 'POST');
    assert.equal(r!.url, `/api/v1/account/our-org/project/our%20project/simulate-bundle`);
    assert.equal(r!.headers['x-access-key'], KEY);
    assert.match(String(r!.headers['content-type']), /application\/json/);
    assert.deepEqual(r!.body.simulations[0], {
      network_id: '31337',
      from: traderA,
      to: usdc,
      input: tx().input,
      value: '0',
      gas_price: '0',
      save: true,
      save_if_fails: true,
      simulation_type: 'full',
    });
    assert.equal('gas' in r!.body.simulations[0]!, false, 'no gas when the client gave none');
    assert.equal(r!.body.simulations[1]!.gas, 100_000);
    assert.equal(r!.body.simulations[1]!.gas_price, '3000000000', "the client's gas price is passed on, not forced to 0");
    assert.equal(r!.body.simulations[1]!.value, '7');
  });

  it('maps results: asset changes to balance changes, raw state diffs, gas, links', async () => {
    const simulator = createSimulator({ providers: [adapter()] });
    const server = await buildServer(simulator);
    try {
      const res = await server.inject({
        method: 'POST',
        url: '/31337/simulation/simulateBundle',
        payload: [
          { from: traderA, to: usdc, input: tx().input },
          { from: traderA, to: traderB, input: '0x', value: '42' },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json() as SimulationResultJson;
      const sink = '0x00000000000000000000000000000000000000b0';
      assert.equal(result.status, true);
      assert.equal(result.provider, 'tenderly');
      assert.equal(result.blockNumber, 19_000_000);
      assert.equal(result.gasUsed, String(30_000 + 30_001));
      // tx 0: A −1000 USDC to sink, +5 minted to A; tx 1 (to traderB, a "token" in this fake): native 42 A → sink, +5 minted
      assert.deepEqual(result.cumulativeBalancesDiff, {
        [traderA]: { [NATIVE]: '-42', [traderB]: '5', [usdc]: '-995' },
        [sink]: { [NATIVE]: '42', [usdc]: '1000' },
      });
      assert.deepEqual(result.stateDiff, [
        { address: traderB, key: `0x${'5'.padStart(64, '0')}`, original: `0x${(1000).toString(16).padStart(64, '0')}`, updated: `0x${(2000).toString(16).padStart(64, '0')}` },
        { address: usdc, key: `0x${'5'.padStart(64, '0')}`, original: `0x${(2000).toString(16).padStart(64, '0')}`, updated: `0x${(1000).toString(16).padStart(64, '0')}` },
      ]);
      assert.equal(result.transactions[0]!.providerLink, 'https://dash.example/public/our-org/our%20project/simulator/sim-0');
      assert.equal(result.providerLink, 'https://dash.example/public/our-org/our%20project/simulator/sim-1');
      assert.match(result.link, /^http:\/\/batchbook\.test\/31337\/simulation\/[0-9a-f-]{36}$/);
      const stored = await server.inject({ method: 'GET', url: new URL(result.link).pathname });
      assert.equal(stored.statusCode, 200);
      assert.equal((stored.json() as { result: SimulationResultJson }).result.provider, 'tenderly');
    } finally {
      await server.close();
      await simulator.stop();
    }
  });

  it('maps a revert: the failing index, its reason and data; the missing rest is not executed', async () => {
    mode = 'revert-second';
    const outcome = await adapter().simulate(request([tx(), tx(), tx()]), new AbortController().signal);
    assert.deepEqual(outcome.transactions.map((t) => t.outcome), ['success', 'reverted', 'not_executed']);
    assert.equal(outcome.transactions[1]!.revertReason, 'Token: amount exceeds balance');
    assert.match(outcome.transactions[1]!.revertData ?? '', /^0x08c379a0/);
    assert.equal(outcome.transactions[1]!.gasUsed, 30_001n);
    assert.equal(outcome.transactions[1]!.balanceChanges.size, 0);
  });

  it('classifies failures: 5xx, garbage, timeout and unreachable are "unavailable", 401 is "failed"', async () => {
    const signal = new AbortController().signal;
    mode = 'http-500';
    await assert.rejects(adapter().simulate(request([tx()]), signal), (e: Error) => e instanceof SimulationUnavailableError && /HTTP 500: internal error/.test(e.message));
    mode = 'garbage';
    await assert.rejects(adapter().simulate(request([tx()]), signal), (e: Error) => e instanceof SimulationUnavailableError && /simulation_results/.test(e.message));
    mode = 'hang';
    await assert.rejects(adapter(300).simulate(request([tx()]), signal), (e: Error) => e instanceof SimulationUnavailableError && /no answer within 300 ms/.test(e.message));
    mode = 'http-401';
    await assert.rejects(adapter().simulate(request([tx()]), signal), (e: Error) => e instanceof SimulationFailedError && /HTTP 401: Invalid access token.*SIMULATION_API_KEY/.test(e.message));
    const closed = new TenderlySimulator({ apiKey: KEY, projectName: PROJECT, orgName: ORG, baseUrl: `http://127.0.0.1:${await findFreePort()}` });
    await assert.rejects(closed.simulate(request([tx()]), signal), (e: Error) => e instanceof SimulationUnavailableError && /unreachable/.test(e.message));
  });

  it('without a fallback, a credentials error is a 500 and an outage a 502', async () => {
    const simulator = createSimulator({ providers: [adapter()] });
    const server = await buildServer(simulator);
    try {
      mode = 'http-401';
      const refused = await server.inject({ method: 'POST', url: '/31337/simulation/simulateBundle', payload: [{ from: traderA, to: usdc, input: '0x' }] });
      assert.equal(refused.statusCode, 500, refused.body);
      assert.match((refused.json() as { message: string }).message, /^simulation failed: Tenderly refused the request/);
      mode = 'http-500';
      const down = await server.inject({ method: 'POST', url: '/31337/simulation/simulateBundle', payload: [{ from: traderA, to: usdc, input: '0x' }] });
      assert.equal(down.statusCode, 502, down.body);
      assert.match((down.json() as { message: string }).message, /^simulation provider unavailable: Tenderly answered HTTP 500/);
    } finally {
      await server.close();
      await simulator.stop();
    }
  });

  for (const failure of ['http-500', 'hang', 'http-401'] as const) {
    it(`falls back to the first-party fork when Tenderly fails (${failure})`, async () => {
      const warnings: string[] = [];
      const simulator = createSimulator({
        tenderly: { apiKey: KEY, projectName: PROJECT, orgName: ORG },
        tenderlyBaseUrl: fakeUrl,
        outboundTimeoutMs: 1_000,
        logger: { info: () => {}, warn: (_o, msg) => warnings.push(msg ?? '') },
      });
      assert.deepEqual(simulator.providers, ['tenderly', 'fork']);
      const server = await buildServer(simulator);
      try {
        mode = failure;
        const res = await server.inject({ method: 'POST', url: '/31337/simulation/simulateBundle', payload: [{ from: traderA, to: usdc, input: tx().input }] });
        assert.equal(res.statusCode, 200, res.body);
        const result = res.json() as SimulationResultJson;
        assert.equal(requests.length, 1, 'Tenderly was asked first');
        assert.equal(result.provider, 'fork');
        assert.equal(result.status, true);
        // the real chain's answer, not the fake's
        assert.deepEqual(result.cumulativeBalancesDiff, { [traderA]: { [usdc]: '-1000' }, [traderB]: { [usdc]: '1000' } });
        assert.deepEqual(warnings, ['simulation: tenderly failed, falling back']);
      } finally {
        await server.close();
        await simulator.stop();
      }
    });
  }

  it('is not used unless all three settings are present', () => {
    assert.deepEqual(createSimulator({ tenderly: { apiKey: KEY, projectName: PROJECT, orgName: null } }).providers, ['fork']);
    assert.deepEqual(createSimulator({ tenderly: { apiKey: KEY, projectName: PROJECT, orgName: ORG } }).providers, ['tenderly', 'fork']);
  });
});
