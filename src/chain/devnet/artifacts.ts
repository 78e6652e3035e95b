// Contract artifacts for the devnet, read at run time (never at import time):
// our own contracts from ./artifacts (compiled by scripts/compile-contracts.ts, committed), everything else from
// the npm packages' build outputs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Abi, Hex } from 'viem';

export interface ContractArtifact {
  abi: Abi;
  /** Creation code (0x-prefixed). */
  bytecode: Hex;
  /** Runtime code (0x-prefixed). */
  deployedBytecode: Hex;
}

export interface DevnetArtifacts {
  /** GPv2AllowListAuthentication from @cowprotocol/contracts lib/contracts (its runtime is set with anvil_setCode). */
  authenticator: ContractArtifact;
  /** GPv2Settlement from @cowprotocol/contracts **deployments/mainnet** (the lib/contracts bytes differ and would
   *  land at a different CREATE2 address). */
  settlement: ContractArtifact;
  weth9: ContractArtifact;
  uniswapV2Factory: ContractArtifact;
  uniswapV2Router02: ContractArtifact;
  devnetToken: ContractArtifact;
  demoSmartWallet: ContractArtifact;
  multicall3: ContractArtifact;
  /** our HooksTrampoline (installed with anvil_setCode at HOOKS_TRAMPOLINE_ADDRESS on every start) */
  hooksTrampoline: ContractArtifact;
  /** our eth-flow contract (sells native ETH; ABI-compatible with production's) */
  ethFlow: ContractArtifact;
}

interface RawArtifact {
  abi: Abi;
  bytecode?: string;
  deployedBytecode?: string;
  evm?: { bytecode?: { object?: string }; deployedBytecode?: { object?: string } };
}

const withPrefix = (hex: string | undefined, what: string): Hex => {
  if (!hex) throw new Error(`artifact ${what} has no bytecode`);
  return (hex.startsWith('0x') ? hex : `0x${hex}`) as Hex;
};

function normalise(raw: RawArtifact, what: string): ContractArtifact {
  return {
    abi: raw.abi,
    bytecode: withPrefix(raw.bytecode ?? raw.evm?.bytecode?.object, what),
    deployedBytecode: withPrefix(raw.deployedBytecode ?? raw.evm?.deployedBytecode?.object, what),
  };
}

/** Loads every artifact the devnet deploys. Throws naming the missing file if a package is absent. */
export function loadDevnetArtifacts(): DevnetArtifacts {
  const require = createRequire(import.meta.url);
  const fromPackage = (spec: string): ContractArtifact => {
    let path: string;
    try {
      path = require.resolve(spec);
    } catch {
      throw new Error(`devnet artifact not found: ${spec} (is the package installed?)`);
    }
    return normalise(JSON.parse(readFileSync(path, 'utf8')) as RawArtifact, spec);
  };
  const own = (name: string): ContractArtifact => {
    const url = new URL(`./artifacts/${name}.json`, import.meta.url);
    let text: string;
    try {
      text = readFileSync(url, 'utf8');
    } catch {
      throw new Error(`devnet artifact not found: ${url.pathname} (run: node --import tsx scripts/compile-contracts.ts)`);
    }
    return normalise(JSON.parse(text) as RawArtifact, name);
  };
  return {
    authenticator: fromPackage('@cowprotocol/contracts/lib/contracts/GPv2AllowListAuthentication.json'),
    settlement: fromPackage('@cowprotocol/contracts/deployments/mainnet/GPv2Settlement.json'),
    weth9: fromPackage('@uniswap/v2-periphery/build/WETH9.json'),
    uniswapV2Factory: fromPackage('@uniswap/v2-core/build/UniswapV2Factory.json'),
    uniswapV2Router02: fromPackage('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
    devnetToken: own('DevnetToken'),
    demoSmartWallet: own('DemoSmartWallet'),
    multicall3: own('Multicall3'),
    hooksTrampoline: own('HooksTrampoline'),
    ethFlow: own('EthFlow'),
  };
}
