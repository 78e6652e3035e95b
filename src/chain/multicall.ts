/**
 * Many contract reads in few `eth_call`s through Multicall3 `aggregate3`, every call allowed to fail on its own.
 * Calls are split into chunks (default 500 calls ≈ a few million gas for ERC-20 reads, well under node gas caps)
 * and the chunks run a few at a time (they share one HTTP request when the transport batches).
 * A transport failure rejects the whole read; a failing call only marks its own result `success: false`.
 *
 * @example
 *   const [r] = await aggregate3(client, [{ target: token, callData: encodeFunctionData({ abi, functionName: 'decimals' }) }]);
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { MULTICALL3_ADDRESS, type ChainClient } from './client.js';

export const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
]);

export interface Call3 {
  target: Address;
  callData: Hex;
}

export interface CallResult {
  success: boolean;
  returnData: Hex;
}

export interface AggregateOptions {
  multicallAddress?: Address;
  /** calls per eth_call (default 500) */
  chunkSize?: number;
  /** chunks in flight at once (default 4) */
  concurrency?: number;
  /** read at this block (default latest); pass one number so every chunk reads the same state */
  blockNumber?: bigint;
}

export class MulticallUnavailableError extends Error {
  constructor(address: Address) {
    super(`Multicall3 at ${address} returned no data (not deployed on this chain?)`);
    this.name = 'MulticallUnavailableError';
  }
}

async function aggregateChunk(client: ChainClient, calls: Call3[], address: Address, blockNumber: bigint | undefined): Promise<CallResult[]> {
  const data = encodeFunctionData({
    abi: multicall3Abi,
    functionName: 'aggregate3',
    args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: c.callData }))],
  });
  const result = await client.call({ to: address, data, ...(blockNumber !== undefined ? { blockNumber } : {}) });
  if (!result.data || result.data === '0x') throw new MulticallUnavailableError(address);
  const decoded = decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: result.data });
  return decoded.map((r) => ({ success: r.success, returnData: r.returnData }));
}

export async function aggregate3(client: ChainClient, calls: Call3[], options: AggregateOptions = {}): Promise<CallResult[]> {
  if (calls.length === 0) return [];
  const address = options.multicallAddress ?? MULTICALL3_ADDRESS;
  const chunkSize = Math.max(1, options.chunkSize ?? 500);
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const chunks: Call3[][] = [];
  for (let i = 0; i < calls.length; i += chunkSize) chunks.push(calls.slice(i, i + chunkSize));

  const results: CallResult[][] = new Array(chunks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) {
      const index = next++;
      results[index] = await aggregateChunk(client, chunks[index], address, options.blockNumber);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));
  return results.flat();
}
