// Compiles the devnet's own Solidity contracts (src/chain/devnet/contracts/*.sol) with the bundled solc-js,
// offline, and writes compact artifacts (contractName, abi, bytecode, deployedBytecode) to
// src/chain/devnet/artifacts/<Contract>.json. The artifacts are committed, so `npm start` never compiles.
//
// Usage: node --import tsx scripts/compile-contracts.ts [--check] [--source <dir> --out <dir>]
//   --check  compile and compare with the committed artifacts; exit 1 if they differ (for CI).
//   --source/--out  another set of contracts, e.g. the tests' own (test/fixtures/contracts → test/fixtures/artifacts).
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface SolcOutputContract {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}
interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, SolcOutputContract>>;
}
interface Solc {
  version(): string;
  compile(input: string, callbacks?: { import: (path: string) => { contents: string } | { error: string } }): string;
}

const EVM_VERSION = 'paris'; // no PUSH0: runs on any hardfork anvil offers

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argument = (name: string): string | null => {
  const i = process.argv.indexOf(name);
  return i === -1 ? null : (process.argv[i + 1] ?? null);
};
const sourceDir = resolve(root, argument('--source') ?? 'src/chain/devnet/contracts');
const artifactDir = resolve(root, argument('--out') ?? 'src/chain/devnet/artifacts');

function main(): void {
  const check = process.argv.includes('--check');
  const require = createRequire(import.meta.url);
  const started = performance.now();
  const solc = require('solc') as Solc;

  const files = readdirSync(sourceDir).filter((f) => f.endsWith('.sol')).sort();
  const sources: Record<string, { content: string }> = {};
  for (const f of files) sources[f] = { content: readFileSync(join(sourceDir, f), 'utf8') };

  const input = {
    language: 'Solidity',
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      // No metadata hash: artifacts are byte-for-byte reproducible from the sources.
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };

  // Imports resolve against node_modules (e.g. "@openzeppelin/contracts/..."), never the network.
  const findImport = (path: string): { contents: string } | { error: string } => {
    try {
      return { contents: readFileSync(require.resolve(path), 'utf8') };
    } catch {
      return { error: `import not found: ${path}` };
    }
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  for (const w of (output.errors ?? []).filter((e) => e.severity === 'warning')) console.warn(w.formattedMessage);
  if (errors.length > 0) {
    for (const e of errors) console.error(e.formattedMessage);
    process.exit(1);
  }

  mkdirSync(artifactDir, { recursive: true });
  let stale = 0;
  for (const file of files) {
    for (const [contractName, c] of Object.entries(output.contracts?.[file] ?? {})) {
      const artifact = {
        contractName,
        compiler: `solc ${solc.version()}`,
        evmVersion: EVM_VERSION,
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      };
      // One line per field (ABI entries one per line): small, and diffs stay readable.
      const text = `{\n${Object.entries(artifact)
        .map(([k, v]) => (k === 'abi' ? ` "abi": [\n${(v as unknown[]).map((e) => `  ${JSON.stringify(e)}`).join(',\n')}\n ]` : ` ${JSON.stringify(k)}: ${JSON.stringify(v)}`))
        .join(',\n')}\n}\n`;
      const target = join(artifactDir, `${contractName}.json`);
      if (check) {
        let current = '';
        try {
          current = readFileSync(target, 'utf8');
        } catch {
          /* missing counts as stale */
        }
        if (current !== text) {
          console.error(`stale artifact: ${target}`);
          stale++;
        }
      } else {
        writeFileSync(target, text);
        const size = (artifact.deployedBytecode.length - 2) / 2;
        console.log(`${contractName}: runtime ${size} bytes -> ${target.slice(root.length + 1)}`);
      }
    }
  }
  console.log(`compiled ${files.length} source files with solc ${solc.version()} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (stale > 0) process.exit(1);
}

main();
