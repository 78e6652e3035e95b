// Restarts against one data directory: resume, hard kill, corrupted / missing / mismatched state.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Hex } from 'viem';
import { findFreePort, startDevnet, type Devnet, type DevnetOptions } from './index.js';
import { createDevnetRpc } from './rpc.js';

let dataDir: string;
const running = new Set<Devnet>();
const statePath = () => join(dataDir, 'devnet', 'state.json');
const deploymentPath = () => join(dataDir, 'devnet', 'deployment.json');

async function start(overrides: Partial<DevnetOptions> = {}): Promise<{ devnet: Devnet; logs: string[] }> {
  const logs: string[] = [];
  const logger = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) };
  const devnet = await startDevnet({
    dataDir,
    port: await findFreePort(),
    blockTime: 1,
    activity: false,
    historyHours: 0.25,
    stateIntervalSeconds: 1,
    logger,
    ...overrides,
  });
  running.add(devnet);
  return { devnet, logs };
}

async function stop(devnet: Devnet): Promise<void> {
  await devnet.stop();
  running.delete(devnet);
}

const rpcOf = (devnet: Devnet) => createDevnetRpc(devnet.rpcUrl);
const blockNumber = async (devnet: Devnet) => BigInt(await rpcOf(devnet).request<Hex>('eth_blockNumber'));
const nonceOf = async (devnet: Devnet, role: string) =>
  BigInt(await rpcOf(devnet).request<Hex>('eth_getTransactionCount', [devnet.deployment.accounts.find((a) => a.role === role)!.address, 'latest']));

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'batchbook-devnet-'));
});

after(async () => {
  for (const d of running) await d.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('devnet persistence', () => {
  let first: { genesisHash: Hex; height: bigint; contracts: Devnet['deployment']['contracts']; deployerNonce: bigint };

  it('a fresh start writes state.json and deployment.json into <dataDir>/devnet', async () => {
    const { devnet } = await start();
    assert.equal(devnet.fresh, true);
    assert.equal(devnet.timings.historyBlocks, 3);
    await sleep(1500); // a few interval blocks
    first = {
      genesisHash: devnet.genesisHash,
      height: await blockNumber(devnet),
      contracts: devnet.deployment.contracts,
      deployerNonce: await nonceOf(devnet, 'deployer'),
    };
    // pretend this chain was saved before the hooks trampoline existed: no code, no record of it
    const trampoline = devnet.deployment.contracts.hooksTrampoline;
    assert.ok((await rpcOf(devnet).request<Hex>('eth_getCode', [trampoline, 'latest'])).length > 2);
    await rpcOf(devnet).request('anvil_setCode', [trampoline, '0x']);
    await sleep(1500); // a state dump without it
    await stop(devnet);
    assert.ok(existsSync(statePath()) && statSync(statePath()).size > 1000);
    const stored = JSON.parse(readFileSync(deploymentPath(), 'utf8'));
    assert.equal(stored.genesisHash, first.genesisHash);
    assert.equal(stored.chainId, 31337);
    assert.deepEqual(stored.deployment.contracts, first.contracts);
    delete stored.deployment.contracts.hooksTrampoline;
    writeFileSync(deploymentPath(), JSON.stringify(stored));
  });

  it('a restart resumes the same chain: same genesis, same or higher block, no redeploy, no replay', async () => {
    const restartedAt = Math.floor(Date.now() / 1000);
    const { devnet, logs } = await start();
    assert.equal(devnet.fresh, false);
    assert.equal(devnet.genesisHash, first.genesisHash);
    assert.deepEqual(devnet.deployment.contracts, first.contracts, 'the hooks trampoline is listed again');
    const code = await rpcOf(devnet).request<Hex>('eth_getCode', [first.contracts.hooksTrampoline, 'latest']);
    assert.ok(code.length > 2, 'a chain saved without the trampoline gets it on restart');
    assert.ok((await blockNumber(devnet)) >= first.height, 'block height kept');
    assert.equal(await nonceOf(devnet, 'deployer'), first.deployerNonce, 'nothing redeployed');
    assert.equal(devnet.timings.deployMs, null);
    assert.equal(devnet.timings.historyMs, null);
    assert.ok(logs.some((l) => l.includes('restored chain')), logs.join('\n'));
    // New blocks carry wall-clock time, after the restored ones: wait for one mined after the restart.
    const restored = await blockNumber(devnet);
    for (let i = 0; i < 600 && (await blockNumber(devnet)) <= restored; i++) await sleep(100);
    const head = await rpcOf(devnet).request<{ number: Hex; timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
    assert.ok(BigInt(head.number) > restored, 'a block was mined after the restart');
    const prev = await rpcOf(devnet).request<{ timestamp: Hex }>('eth_getBlockByNumber', [`0x${(BigInt(head.number) - 1n).toString(16)}`, false]);
    const now = Math.ceil(Date.now() / 1000);
    assert.ok(Number(BigInt(head.timestamp)) >= restartedAt && Number(BigInt(head.timestamp)) <= now, `head timestamp ${BigInt(head.timestamp)}: between the restart (${restartedAt}) and now (${now})`);
    assert.ok(BigInt(head.timestamp) > BigInt(prev.timestamp));
    // The restored chain still works: the faucet mints.
    const r = await devnet.faucet({ address: devnet.deployment.accounts[1]!.address, token: 'DAI', amount: '1' });
    assert.equal((await r.waitForReceipt()).status, 'success');
    await stop(devnet);
    // Exactly one block 0 in the dump (anvil adds a second one if restarted with another genesis timestamp).
    const state = JSON.parse(readFileSync(statePath(), 'utf8')) as { blocks: { header: { number: Hex } }[] };
    assert.equal(state.blocks.filter((b) => BigInt(b.header.number) === 0n).length, 1);
  });

  it('survives a hard kill thanks to periodic state dumps', async () => {
    const { devnet, logs } = await start();
    assert.equal(devnet.fresh, false, logs.join('\n'));
    const height = await blockNumber(devnet);
    await sleep(2500); // at least one --state-interval dump (1 s in this test)
    process.kill(devnet.anvilPid, 'SIGKILL');
    const exit = await devnet.exited;
    assert.equal(exit.signal, 'SIGKILL');
    running.delete(devnet);
    const again = await start();
    assert.equal(again.devnet.fresh, false, again.logs.join('\n'));
    assert.equal(again.devnet.genesisHash, first.genesisHash);
    assert.ok((await blockNumber(again.devnet)) >= height);
    await stop(again.devnet);
  });

  it('a corrupted state file starts a fresh chain (same addresses, new genesis)', async () => {
    writeFileSync(statePath(), '{"this is": not json');
    const { devnet, logs } = await start();
    assert.equal(devnet.fresh, true);
    assert.notEqual(devnet.genesisHash, first.genesisHash);
    assert.deepEqual(devnet.deployment.contracts, first.contracts, 'deterministic addresses');
    assert.ok(logs.some((l) => l.includes('starting a fresh chain')), logs.join('\n'));
    first = { ...first, genesisHash: devnet.genesisHash, height: await blockNumber(devnet) };
    await stop(devnet);
    assert.equal(JSON.parse(readFileSync(deploymentPath(), 'utf8')).genesisHash, first.genesisHash);
  });

  it('a missing state file starts a fresh chain', async () => {
    rmSync(statePath());
    const { devnet } = await start({ historyHours: 0 });
    assert.equal(devnet.fresh, true);
    assert.notEqual(devnet.genesisHash, first.genesisHash);
    first = { ...first, genesisHash: devnet.genesisHash };
    await stop(devnet);
  });

  it('a deployment record that does not match the chain starts a fresh chain', async () => {
    const stored = JSON.parse(readFileSync(deploymentPath(), 'utf8'));
    stored.genesisHash = `0x${'ab'.repeat(32)}`;
    writeFileSync(deploymentPath(), JSON.stringify(stored));
    const { devnet, logs } = await start({ historyHours: 0 });
    assert.equal(devnet.fresh, true);
    assert.ok(logs.some((l) => /does not match its deployment record \(block 0 hash/.test(l)), logs.join('\n'));
    await stop(devnet);
    // And a record of another format version too.
    const record = JSON.parse(readFileSync(deploymentPath(), 'utf8'));
    writeFileSync(deploymentPath(), JSON.stringify({ ...record, formatVersion: 0 }));
    const next = await start({ historyHours: 0 });
    assert.equal(next.devnet.fresh, true);
    await stop(next.devnet);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
