/**
 * simulateBundle (issue 15, point 7): the first-party fork simulator running a bundle of 3 transactions (an ERC-20
 * approve, a transfer and a WETH deposit of a devnet trader, each reported with its balance and storage changes)
 * against the devnet, divided by the same 3 transactions run as plain sequential `eth_call`s on the devnet, same
 * run, same machine. The simulator is warmed up first (its forks are pooled), and each side runs ROUNDS times,
 * alternating; the figures are medians. Lower is better.
 */
import { performance } from 'node:perf_hooks';
import { encodeFunctionData, numberToHex, parseAbi, type Address, type Hex } from 'viem';
import { startTestDevnet } from '../src/chain/test-devnet.js';
import { ForkSimulator } from '../src/aux/simulation/fork-simulator.js';
import { rpcCall } from '../src/aux/simulation/json-rpc.js';
import type { BundleRequest } from '../src/aux/simulation/types.js';
import type { Figure } from './figure.js';

const ROUNDS = 15;
const ERC20 = parseAbi(['function approve(address, uint256) returns (bool)', 'function transfer(address, uint256) returns (bool)', 'function deposit() payable']);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchSimulation(): Promise<Figure[]> {
  const chain = await startTestDevnet();
  const simulator = new ForkSimulator({ idleForks: 1 });
  try {
    const d = chain.devnet.deployment;
    const trader = d.accounts.find((a) => a.role === 'trader')!.address.toLowerCase() as Address;
    const weth = d.contracts.weth.toLowerCase() as Address;
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Address;
    const other = '0x00000000000000000000000000000000000b0b00' as Address;
    const txs = [
      { from: trader, to: usdc, input: encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [d.contracts.vaultRelayer, 10n ** 12n] }), value: 0n },
      { from: trader, to: usdc, input: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [other, 10n ** 6n] }), value: 0n },
      { from: trader, to: weth, input: encodeFunctionData({ abi: ERC20, functionName: 'deposit' }), value: 10n ** 15n },
    ];
    const request: BundleRequest = { chainId: 31337, rpcUrl: chain.rpcUrl, wrappedNative: weth, transactions: txs.map((t) => ({ ...t, gas: null, gasPrice: null })) };
    const plain = async () => {
      for (const t of txs) await rpcCall<Hex>(chain.rpcUrl, 'eth_call', [{ from: t.from, to: t.to, data: t.input, value: numberToHex(t.value) }, 'latest'], { timeoutMs: 30_000 });
    };
    const signal = new AbortController().signal;
    const coldStarted = performance.now();
    const check = await simulator.simulate(request, signal); // on a new fork: nothing pooled yet
    const coldMs = performance.now() - coldStarted;
    if (!check.transactions.every((t) => t.outcome === 'success')) throw new Error(`the bench bundle did not succeed: ${JSON.stringify(check.transactions.map((t) => [t.outcome, t.revertReason]))}`);
    if (check.transactions[1]!.storageChanges.length === 0) throw new Error('the transfer reported no storage change');
    await plain();
    const sim: number[] = [];
    const calls: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      let t = performance.now();
      await simulator.simulate(request, signal);
      sim.push(performance.now() - t);
      t = performance.now();
      await plain();
      calls.push(performance.now() - t);
    }
    const pooled = {
      name: 'simulate-bundle',
      value: median(sim),
      unit: 'ms median simulateBundle of 3 transactions (fork simulator, balance + storage changes)',
      baseline: median(calls),
      baselineUnit: 'ms median of the same 3 transactions as plain sequential eth_calls',
      ratio: median(sim) / median(calls),
      note: `median of ${ROUNDS} alternating runs; 1 s devnet blocks (the fork follows the head); lower is better`,
    };
    const cold = {
      name: 'simulate-bundle-new-fork',
      value: coldMs,
      unit: 'ms for the first simulateBundle of the run (a new fork is started)',
      baseline: median(sim),
      baselineUnit: 'ms median simulateBundle on a pooled fork (above)',
      ratio: coldMs / median(sim),
      note: 'one run; moved here from src/aux/simulation/simulation.test.ts, which printed it',
    };
    return [pooled, cold];
  } finally {
    await simulator.close();
    await chain.stop();
  }
}
