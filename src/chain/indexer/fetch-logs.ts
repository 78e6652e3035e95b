/**
 * `eth_getLogs` for a block range over many addresses and topic0s: addresses are split into groups (node
 * limits), the groups are fetched concurrently and the logs come back sorted by (block, log index).
 * A node refusing the range ("too many results", "block range too large") raises `LogRangeTooLargeError`,
 * carrying the node's suggested end block when it names one.
 */
import { numberToHex, type Address, type Hex } from 'viem';
import type { ChainClient } from '../client.js';
import { isLogRangeTooLarge } from '../rpc-retry.js';
import type { RawLog } from './decode-logs.js';

export class LogRangeTooLargeError extends Error {
  constructor(
    readonly fromBlock: number,
    readonly toBlock: number,
    readonly suggestedToBlock: number | null,
    cause: unknown,
  ) {
    super(`eth_getLogs refused blocks ${fromBlock}..${toBlock}`, { cause });
    this.name = 'LogRangeTooLargeError';
  }
}

interface RpcLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex | null;
  blockHash: Hex | null;
  logIndex: Hex | null;
  transactionHash: Hex | null;
  removed?: boolean;
}

export interface FetchLogsParams {
  addresses: readonly Address[];
  /** topic0 alternatives */
  topics: readonly Hex[];
  fromBlock: number;
  toBlock: number;
  /** addresses per eth_getLogs (default 500) */
  addressesPerCall?: number;
}

/** The end block a node suggests in its refusal, e.g. "... Try with this block range [0x10, 0x1f]". */
export function suggestedRangeEnd(error: unknown): number | null {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    const e = current as { message?: unknown; details?: unknown; cause?: unknown };
    const match = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(`${String(e.message ?? '')} ${String(e.details ?? '')}`);
    if (match) return Number.parseInt(match[2], 16);
    current = e.cause;
  }
  return null;
}

export async function fetchLogs(client: ChainClient, params: FetchLogsParams): Promise<RawLog[]> {
  const { addresses, topics, fromBlock, toBlock } = params;
  if (addresses.length === 0 || topics.length === 0 || toBlock < fromBlock) return [];
  const perCall = Math.max(1, params.addressesPerCall ?? 500);
  const groups: Address[][] = [];
  for (let i = 0; i < addresses.length; i += perCall) groups.push(addresses.slice(i, i + perCall));

  let responses: RpcLog[][];
  try {
    responses = await Promise.all(
      groups.map(
        (group) =>
          client.request({
            method: 'eth_getLogs',
            params: [{ address: group, topics: [[...topics]], fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) }],
          } as never) as Promise<RpcLog[]>,
      ),
    );
  } catch (error) {
    if (isLogRangeTooLarge(error)) throw new LogRangeTooLargeError(fromBlock, toBlock, suggestedRangeEnd(error), error);
    throw error;
  }

  const logs: RawLog[] = [];
  for (const response of responses) {
    for (const log of response) {
      if (log.removed || log.blockNumber === null || log.blockHash === null || log.logIndex === null || log.transactionHash === null) continue;
      logs.push({
        address: log.address,
        topics: log.topics,
        data: log.data,
        blockNumber: Number.parseInt(log.blockNumber, 16),
        blockHash: log.blockHash.toLowerCase() as Hex,
        logIndex: Number.parseInt(log.logIndex, 16),
        transactionHash: log.transactionHash,
      });
    }
  }
  logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return logs;
}
