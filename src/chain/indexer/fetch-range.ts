/**
 * Reads one block range from the node: the logs of the followed contracts (plus, in the same range, the logs of
 * pools a factory created in it), the headers needed for timestamps and reorg tracking, and checks that all of
 * it belongs to one chain: every log's block hash matches its header, consecutive headers link, and the first
 * block's parent is the checkpoint. Anything else means the chain moved under us: `ReorgDetectedError`.
 */
import type { Address, Hex } from 'viem';
import type { ChainClient } from '../client.js';
import { fetchBlockHeaders, type BlockHeader } from './block-headers.js';
import { decodeLogs, emptyEvents, type DecodedEvents, type LogRoles, type PairCreatedEvent, type RawLog } from './decode-logs.js';
import { ETHFLOW_TOPICS, FACTORY_TOPICS, POOL_TOPICS, SETTLEMENT_TOPICS, TOKEN_TOPICS } from './event-topics.js';
import { fetchLogs } from './fetch-logs.js';
import type { Checkpoint } from './checkpoint-store.js';

export class ReorgDetectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReorgDetectedError';
  }
}

export interface RangeRequest {
  fromBlock: number;
  toBlock: number;
  /** the chain head the range was planned against */
  head: number;
  /** headers of every block within this distance of the head are fetched and remembered */
  reorgWindow: number;
  /** the block expected right below `fromBlock`, if known */
  parent: Checkpoint | null;
  roles: LogRoles;
  addressesPerCall?: number;
}

export interface FetchedRange {
  events: DecodedEvents;
  /** every header fetched, by number (always includes fromBlock and toBlock) */
  headers: Map<number, BlockHeader>;
  /** headers to remember for reorg detection (the near-head ones, plus the last block) */
  recentHeaders: BlockHeader[];
  /** pools created by a followed factory in this range */
  newPairs: PairCreatedEvent[];
  logCount: number;
  skipped: number;
}

function topicsFor(roles: LogRoles): Hex[] {
  const topics: Hex[] = [];
  if (roles.settlement) topics.push(...SETTLEMENT_TOPICS);
  if (roles.tokens.size > 0) topics.push(...TOKEN_TOPICS);
  if (roles.pools.size > 0) topics.push(...POOL_TOPICS);
  if (roles.factories.size > 0) topics.push(...FACTORY_TOPICS);
  if ((roles.ethFlows?.size ?? 0) > 0) topics.push(...ETHFLOW_TOPICS);
  return topics;
}

function addressesOf(roles: LogRoles): Address[] {
  const all = new Set<string>([...roles.tokens, ...roles.pools, ...roles.factories, ...(roles.ethFlows ?? [])]);
  if (roles.settlement) all.add(roles.settlement);
  return [...all] as Address[];
}

export async function fetchRange(client: ChainClient, request: RangeRequest): Promise<FetchedRange> {
  const { fromBlock, toBlock, roles } = request;
  const logs: RawLog[] = await fetchLogs(client, { addresses: addressesOf(roles), topics: topicsFor(roles), fromBlock, toBlock, addressesPerCall: request.addressesPerCall });
  const events = emptyEvents();
  let { skipped } = decodeLogs(logs, roles, events);

  const newPairs = events.pairs.filter((p) => !roles.pools.has(p.pair));
  if (newPairs.length > 0) {
    const pairLogs = await fetchLogs(client, {
      addresses: newPairs.map((p) => p.pair),
      topics: POOL_TOPICS,
      fromBlock: Math.min(...newPairs.map((p) => p.blockNumber)),
      toBlock,
      addressesPerCall: request.addressesPerCall,
    });
    const pairRoles: LogRoles = { settlement: '', tokens: new Set(), pools: new Set(newPairs.map((p) => p.pair)), factories: new Set() };
    skipped += decodeLogs(pairLogs, pairRoles, events).skipped;
    logs.push(...pairLogs);
  }

  const wanted = new Set<number>([fromBlock, toBlock]);
  for (const log of logs) wanted.add(log.blockNumber);
  const nearHeadFrom = Math.max(fromBlock, request.head - request.reorgWindow + 1);
  for (let n = nearHeadFrom; n <= toBlock; n++) wanted.add(n);
  const headers = await fetchBlockHeaders(client, wanted);

  for (const n of wanted) {
    if (!headers.has(n)) throw new ReorgDetectedError(`block ${n} is no longer on the chain`);
  }
  for (const log of logs) {
    if (headers.get(log.blockNumber)!.hash !== log.blockHash) {
      throw new ReorgDetectedError(`log in block ${log.blockNumber} has hash ${log.blockHash}, the block now has ${headers.get(log.blockNumber)!.hash}`);
    }
  }
  for (const [n, header] of headers) {
    const previous = headers.get(n - 1);
    if (previous && header.parentHash !== previous.hash) throw new ReorgDetectedError(`block ${n} does not extend block ${n - 1}`);
  }
  const first = headers.get(fromBlock)!;
  if (request.parent && request.parent.number === fromBlock - 1 && first.parentHash !== request.parent.hash) {
    throw new ReorgDetectedError(`block ${fromBlock} does not extend the checkpoint ${request.parent.number}`);
  }

  const recentHeaders = [...headers.values()].filter((h) => h.number >= nearHeadFrom || h.number === toBlock).sort((a, b) => a.number - b.number);
  return { events, headers, recentHeaders, newPairs, logCount: logs.length, skipped };
}
