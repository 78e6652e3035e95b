/**
 * Block headers (number, hash, parent hash, timestamp) by number, fetched concurrently (one JSON-RPC batch per
 * group when the transport batches). Blocks the node does not have (beyond its head) are absent from the map.
 */
import { numberToHex, type Hex } from 'viem';
import type { ChainClient } from '../client.js';

export interface BlockHeader {
  number: number;
  hash: Hex;
  parentHash: Hex;
  /** seconds */
  timestamp: number;
}

interface RpcBlock {
  number: Hex | null;
  hash: Hex | null;
  parentHash: Hex;
  timestamp: Hex;
}

export async function fetchBlockHeader(client: ChainClient, number: number): Promise<BlockHeader | null> {
  const block = (await client.request({ method: 'eth_getBlockByNumber', params: [numberToHex(number), false] } as never)) as RpcBlock | null;
  if (!block || block.hash === null || block.number === null) return null;
  return {
    number: Number.parseInt(block.number, 16),
    hash: block.hash.toLowerCase() as Hex,
    parentHash: block.parentHash.toLowerCase() as Hex,
    timestamp: Number.parseInt(block.timestamp, 16),
  };
}

export async function fetchBlockHeaders(client: ChainClient, numbers: Iterable<number>, groupSize = 200): Promise<Map<number, BlockHeader>> {
  const unique = [...new Set(numbers)].sort((a, b) => a - b);
  const headers = new Map<number, BlockHeader>();
  for (let i = 0; i < unique.length; i += groupSize) {
    const group = unique.slice(i, i + groupSize);
    const fetched = await Promise.all(group.map((n) => fetchBlockHeader(client, n)));
    for (const header of fetched) if (header) headers.set(header.number, header);
  }
  return headers;
}

/** The latest block's number and hash. */
export async function fetchHeadHeader(client: ChainClient): Promise<BlockHeader> {
  const block = (await client.request({ method: 'eth_getBlockByNumber', params: ['latest', false] } as never)) as RpcBlock | null;
  if (!block || block.hash === null || block.number === null) throw new Error('the node returned no latest block');
  return {
    number: Number.parseInt(block.number, 16),
    hash: block.hash.toLowerCase() as Hex,
    parentHash: block.parentHash.toLowerCase() as Hex,
    timestamp: Number.parseInt(block.timestamp, 16),
  };
}
