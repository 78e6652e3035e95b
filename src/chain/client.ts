/**
 * A viem public client for one chain: HTTP (or WebSocket for ws/wss URLs) with a request timeout, retries with
 * jittered exponential backoff, JSON-RPC batching, and `eth_call` aggregation through Multicall3.
 *
 * @example
 *   const client = createChainClient({ chainId: 31337, rpcUrl: 'http://127.0.0.1:8545', timeoutMs: 10_000 });
 *   await client.getBlockNumber();
 */
import { createPublicClient, defineChain, http, webSocket, type Address, type Chain, type PublicClient, type Transport } from 'viem';
import { withJitteredRetry } from './rpc-retry.js';

/** Multicall3's address on (nearly) every EVM chain; the devnet installs it there too. */
export const MULTICALL3_ADDRESS: Address = '0xca11bde05977b3631167028862be2a173976ca11';

export interface ChainClientOptions {
  chainId: number;
  rpcUrl: string;
  /** per request, ms */
  timeoutMs: number;
  /** retries after the first attempt (default 4) */
  retryCount?: number;
  /** first retry waits up to this long, doubling each time (default 200 ms, capped at 5 s) */
  retryBaseDelayMs?: number;
  /** polling interval of viem's watchers (default 1 s) */
  pollingIntervalMs?: number;
  /** JSON-RPC requests per HTTP batch (default 100) */
  batchSize?: number;
  /** Multicall3 address (default the canonical one) */
  multicallAddress?: Address;
}

export type ChainClient = PublicClient<Transport, Chain>;

/** A viem chain definition for an arbitrary chain id, with Multicall3 so `batch.multicall` works. */
export function chainDefinition(chainId: number, rpcUrl: string, multicallAddress: Address = MULTICALL3_ADDRESS): Chain {
  return defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: multicallAddress } },
  });
}

export function isWebSocketUrl(url: string): boolean {
  return /^wss?:\/\//i.test(url);
}

export function createChainClient(options: ChainClientOptions): ChainClient {
  const { chainId, rpcUrl, timeoutMs } = options;
  const inner = isWebSocketUrl(rpcUrl)
    ? webSocket(rpcUrl, { timeout: timeoutMs, retryCount: 0, keepAlive: true, reconnect: true })
    : http(rpcUrl, { timeout: timeoutMs, retryCount: 0, batch: { batchSize: options.batchSize ?? 100, wait: 0 } });
  const transport = withJitteredRetry(inner as Transport, {
    retryCount: options.retryCount ?? 4,
    baseDelayMs: options.retryBaseDelayMs ?? 200,
    maxDelayMs: 5_000,
    // retries fit in the request timeout: an RPC node that stalls costs a call one timeout, not five
    budgetMs: timeoutMs,
  });
  return createPublicClient({
    chain: chainDefinition(chainId, rpcUrl, options.multicallAddress),
    transport,
    pollingInterval: options.pollingIntervalMs ?? 1_000,
    batch: { multicall: { batchSize: 16_384, wait: 0 } },
    cacheTime: 0,
  }) as ChainClient;
}
