import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { keccak256 } from 'viem';
import { loadDevnetArtifacts } from './artifacts.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('devnet artifacts', () => {
  it('loads every artifact with 0x-prefixed creation and runtime code', () => {
    const artifacts = loadDevnetArtifacts();
    for (const [name, a] of Object.entries(artifacts)) {
      assert.match(a.bytecode, /^0x[0-9a-f]{200,}$/i, name);
      assert.match(a.deployedBytecode, /^0x[0-9a-f]{200,}$/i, name);
      assert.ok(Array.isArray(a.abi) && a.abi.length > 0, name);
    }
  });

  it('uses the mainnet deployment bytecode of GPv2Settlement, not lib/contracts', () => {
    const require = createRequire(import.meta.url);
    const lib = require('@cowprotocol/contracts/lib/contracts/GPv2Settlement.json') as { bytecode: string };
    const mainnet = require('@cowprotocol/contracts/deployments/mainnet/GPv2Settlement.json') as { bytecode: string };
    const { settlement } = loadDevnetArtifacts();
    assert.equal(settlement.bytecode, mainnet.bytecode);
    assert.notEqual(keccak256(settlement.bytecode), keccak256(lib.bytecode as `0x${string}`));
  });

  it('committed artifacts are small and match the Solidity sources (compile-contracts --check)', () => {
    const dir = fileURLToPath(new URL('./artifacts/', import.meta.url));
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.deepEqual(files.sort(), ['DemoSmartWallet.json', 'DevnetToken.json', 'EthFlow.json', 'HooksTrampoline.json', 'Multicall3.json']);
    for (const f of files) {
      assert.ok(statSync(dir + f).size < 40_000, `${f} is ${statSync(dir + f).size} bytes`);
      assert.deepEqual(Object.keys(JSON.parse(readFileSync(dir + f, 'utf8'))), ['contractName', 'compiler', 'evmVersion', 'abi', 'bytecode', 'deployedBytecode']);
    }
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/compile-contracts.ts', '--check'], { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  });
});
