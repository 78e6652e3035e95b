/**
 * Indexer throughput (moved here from src/chain/indexer/indexer.test.ts, which printed it): 3 000 ERC-20 transfers
 * over 500 blocks on the devnet, indexed from block 0 into PGlite (every log decoded, stored and folded into holder
 * balances), divided by fetching the same logs with one plain `eth_getLogs` of the range, same run, same machine.
 * One run each. Lower is better.
 */
import { performance } from 'node:perf_hooks';
import { encodeFunctionData, numberToHex, parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { startTestDevnet } from '../src/chain/test-devnet.js';
import { createChainClient } from '../src/chain/client.js';
import { Indexer } from '../src/chain/indexer/indexer.js';
import { openDatabase } from '../src/db/connection.js';
import type { Figure } from './figure.js';

const TRANSFERS = 3_000;
const BLOCKS = 500;
const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export async function benchIndexer(): Promise<Figure> {
  const chain = await startTestDevnet();
  const database = await openDatabase({ kind: 'pglite', dataDir: null });
  try {
    const d = chain.devnet.deployment;
    const traders = d.accounts.filter((a) => a.role === 'trader').map((a) => a.address);
    const usdc = d.tokens.find((t) => t.symbol === 'USDC')!.address;
    await chain.sendAndWait(Array.from({ length: TRANSFERS }, (_, i) => ({
      from: traders[i % 2]!,
      to: usdc,
      data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [privateKeyToAddress(generatePrivateKey()) as Address, BigInt(i + 1)] }),
      gas: 60_000n,
    })));
    await chain.mine(BLOCKS);
    const head = await chain.blockNumber();

    const client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 60_000 });
    const tokens = d.tokens.map((t) => t.address);
    let t = performance.now();
    const raw = await chain.rpc<unknown[]>('eth_getLogs', [{ fromBlock: '0x0', toBlock: numberToHex(head), address: tokens }]);
    const fetchMs = performance.now() - t;

    const indexer = new Indexer({
      chainId: 31337, client, db: database.db, settlement: d.contracts.settlement, tokens: () => tokens, pools: () => [],
      factory: d.contracts.ammFactory, logger: quiet, startBlock: 0,
    });
    t = performance.now();
    await indexer.indexTo(head);
    const indexMs = performance.now() - t;
    const { logs, blocks, ranges } = indexer.stats;
    if (logs < TRANSFERS) throw new Error(`indexed ${logs} logs, fewer than the ${TRANSFERS} transfers`);
    return {
      name: 'indexer-throughput',
      value: indexMs,
      unit: `ms to index ${logs} logs over ${blocks} blocks into PGlite (${Math.round(logs / (indexMs / 1000))} logs/s, ${ranges} ranges)`,
      baseline: fetchMs,
      baselineUnit: `ms for one plain eth_getLogs of the same range (${raw.length} logs)`,
      ratio: indexMs / fetchMs,
      note: `${TRANSFERS} transfers, ${BLOCKS} empty blocks after them; one run; lower is better`,
    };
  } finally {
    await database.close();
    await chain.stop();
  }
}
