/**
 * token0()/token1() of Uniswap-V2-style pairs, in one Multicall3 read. Pairs that do not answer both are absent.
 */
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import type { ChainClient } from '../client.js';
import { aggregate3, type Call3 } from '../multicall.js';

const pairAbi = parseAbi(['function token0() view returns (address)', 'function token1() view returns (address)']);

export async function readPairTokens(client: ChainClient, pairs: Address[], multicallAddress?: Address): Promise<Map<Address, { token0: Address; token1: Address }>> {
  const calls: Call3[] = pairs.flatMap((pair) => [
    { target: pair, callData: encodeFunctionData({ abi: pairAbi, functionName: 'token0' }) },
    { target: pair, callData: encodeFunctionData({ abi: pairAbi, functionName: 'token1' }) },
  ]);
  const results = await aggregate3(client, calls, { multicallAddress });
  const out = new Map<Address, { token0: Address; token1: Address }>();
  pairs.forEach((pair, i) => {
    const [a, b] = [results[2 * i], results[2 * i + 1]];
    if (!a.success || !b.success || a.returnData.length < 66 || b.returnData.length < 66) return;
    const token0 = `0x${a.returnData.slice(26, 66)}`.toLowerCase() as Address;
    const token1 = `0x${b.returnData.slice(26, 66)}`.toLowerCase() as Address;
    out.set(pair.toLowerCase() as Address, { token0, token1 });
  });
  return out;
}
