/**
 * One served network: its client, reader and the addresses the services need. The devnet is one more
 * network whose addresses come from its deployment; a real chain's from the protocol tables.
 */
import type { Address, Hex } from 'viem';
import type { Config } from '../config/config.js';
import { ETHFLOW_PRODUCTION_ADDRESSES, networkByChainId, SETTLEMENT_ADDRESS, VAULT_RELAYER_ADDRESS } from '../protocol/index.js';
import { servedNetworkName } from '../protocol/networks.js';
import { createChainClient, type ChainClient } from './client.js';
import { ChainReader } from './reader.js';
import type { Devnet } from './devnet/index.js';
import { knownAmm, knownUsdStables, type AmmDeployment } from './amm-registry.js';

export interface ChainNetwork {
  name: string;
  chainId: number;
  rpcUrl: string;
  client: ChainClient;
  reader: ChainReader;
  settlement: Address;
  vaultRelayer: Address;
  /** our HooksTrampoline, through which settlements run order hooks; null where none is deployed (hooks are not run) */
  hooksTrampoline: Address | null;
  /** eth-flow contracts whose on-chain orders are indexed and auctioned (lowercase; empty: none) */
  ethFlows: Address[];
  wrappedNative: Address | null;
  nativeCurrency: { symbol: string; name: string; decimals: number };
  amm: AmmDeployment | null;
  /** intermediate tokens for routing and pricing (wrapped native first) */
  connectors: Address[];
  usdStables: Address[];
  /**
   * tokens whose Transfers are indexed, for top holders served from our own index: only tokens indexed from their
   * deployment can be (the devnet's, from block 0); on a real chain indexed from the head none is, so none is
   * indexed (holders come from the configured holder APIs)
   */
  trackedTokens: Address[];
  /** AMM pools whose Sync/Swap events are indexed */
  trackedPools: Array<{ address: Address; token0: Address; token1: Address }>;
  genesisHash: Hex;
  devnet: Devnet | null;
  /** first block the indexer reads on a fresh start (fork mode: the block after the fork block); default per chain */
  indexFrom?: number;
  /**
   * fork mode, first start only: the listed pools' Sync/Swap events of `windowSeconds` before the fork block
   * (`toBlock`), read once through the fork (the upstream's history) so slippage and volatility answer at once
   */
  poolHistory?: { toBlock: number; windowSeconds: number };
}

const lower = (a: string) => a.toLowerCase() as Address;

/** fork mode: hours of the pools' history before the fork block read on the first start (slippage's 24 h window holds them) */
export const FORK_POOL_HISTORY_SECONDS = 6 * 3600;

export async function devnetNetwork(devnet: Devnet, config: Config): Promise<ChainNetwork> {
  if (devnet.fork) return forkNetwork(devnet, config);
  const client = createChainClient({ chainId: 31337, rpcUrl: devnet.rpcUrl, timeoutMs: config.outboundTimeoutMs });
  const reader = new ChainReader(client, { pollingIntervalMs: Math.max(200, Math.min(1000, devnet.blockTime * 500)) });
  const { contracts, tokens, pools } = devnet.deployment;
  const weth = lower(contracts.weth);
  const usd = tokens.filter((t) => /USD/.test(t.symbol) && t.decimals === 6).map((t) => lower(t.address));
  return {
    name: 'devnet',
    chainId: 31337,
    rpcUrl: devnet.rpcUrl,
    client,
    reader,
    settlement: lower(contracts.settlement),
    vaultRelayer: lower(contracts.vaultRelayer),
    hooksTrampoline: lower(contracts.hooksTrampoline),
    ethFlows: contracts.ethFlow ? [lower(contracts.ethFlow)] : [],
    wrappedNative: weth,
    nativeCurrency: { symbol: 'ETH', name: 'Ether', decimals: 18 },
    amm: { name: 'uniswap-v2', factory: lower(contracts.ammFactory), router: lower(contracts.ammRouter) },
    connectors: [weth, ...usd],
    usdStables: [...usd, ...tokens.filter((t) => /USD|DAI/.test(t.symbol) && !usd.includes(lower(t.address))).map((t) => lower(t.address))],
    trackedTokens: tokens.map((t) => lower(t.address)),
    trackedPools: pools.map((p) => ({ address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1) })),
    genesisHash: devnet.genesisHash,
    devnet,
  };
}

/**
 * A fork of a live chain (FORK_URL), served under the chain's own network name and id: its canonical contracts, its
 * listed tokens and its Uniswap-V2 pairs among them, indexed from the block after the fork block.
 */
function forkNetwork(devnet: Devnet, config: Config): ChainNetwork {
  const fork = devnet.fork!;
  const client = createChainClient({ chainId: fork.chainId, rpcUrl: devnet.rpcUrl, timeoutMs: config.outboundTimeoutMs });
  const reader = new ChainReader(client, { pollingIntervalMs: Math.max(200, Math.min(1000, devnet.blockTime * 500)) });
  const { contracts, tokens, pools } = devnet.deployment;
  const known = networkByChainId(fork.chainId);
  const weth = lower(contracts.weth);
  const listed = new Set(tokens.map((t) => lower(t.address)));
  const usd = knownUsdStables(fork.chainId).map(lower).filter((a) => listed.has(a));
  const hasAmm = contracts.ammFactory !== '0x0000000000000000000000000000000000000000';
  return {
    name: servedNetworkName(fork.chainId).name,
    chainId: fork.chainId,
    rpcUrl: devnet.rpcUrl,
    client,
    reader,
    settlement: lower(contracts.settlement),
    vaultRelayer: lower(contracts.vaultRelayer),
    hooksTrampoline: lower(contracts.hooksTrampoline),
    // the chain's production eth-flow contracts, as on the real chain (ETHFLOW_CONTRACTS overrides)
    ethFlows: (config.ethflow.contracts ?? ETHFLOW_PRODUCTION_ADDRESSES[fork.chainId] ?? []).map(lower),
    wrappedNative: weth,
    nativeCurrency: known
      ? { symbol: known.nativeCurrency.symbol, name: known.nativeCurrency.symbol, decimals: known.nativeCurrency.decimals }
      : { symbol: 'ETH', name: 'Ether', decimals: 18 },
    amm: hasAmm ? { name: knownAmm(fork.chainId)?.name ?? 'uniswap-v2', factory: lower(contracts.ammFactory), router: lower(contracts.ammRouter) } : null,
    connectors: [weth, ...usd],
    usdStables: usd,
    // indexed from the fork block, holder sums would be incomplete (as on a real chain)
    trackedTokens: [],
    trackedPools: pools.map((p) => ({ address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1) })),
    genesisHash: devnet.genesisHash,
    devnet,
    indexFrom: fork.block + 1,
    // a restart keeps what the first start stored (and has no upstream to read from)
    ...(devnet.fresh ? { poolHistory: { toBlock: fork.block, windowSeconds: FORK_POOL_HISTORY_SECONDS } } : {}),
  };
}

export async function rpcNetwork(chainId: number, rpcUrl: string, config: Config): Promise<ChainNetwork> {
  const known = networkByChainId(chainId);
  if (!known) throw new Error(`RPC_URL_${chainId}: chain ${chainId} is not a supported order-book network`);
  const client = createChainClient({ chainId, rpcUrl, timeoutMs: config.outboundTimeoutMs });
  const actual = await client.getChainId();
  if (actual !== chainId) throw new Error(`RPC_URL_${chainId} answers for chain ${actual}, not ${chainId}`);
  const genesis = await client.getBlock({ blockNumber: 0n });
  const reader = new ChainReader(client, { pollingIntervalMs: 4000 });
  const wrapped = known.wrappedNativeToken ? lower(known.wrappedNativeToken) : null;
  const usd = knownUsdStables(chainId);
  return {
    name: known.name,
    chainId,
    rpcUrl,
    client,
    reader,
    settlement: lower(SETTLEMENT_ADDRESS),
    vaultRelayer: lower(VAULT_RELAYER_ADDRESS),
    hooksTrampoline: null,
    ethFlows: (config.ethflow.contracts ?? ETHFLOW_PRODUCTION_ADDRESSES[chainId] ?? []).map(lower),
    wrappedNative: wrapped,
    nativeCurrency: { symbol: known.nativeCurrency.symbol, name: known.nativeCurrency.symbol, decimals: known.nativeCurrency.decimals },
    amm: knownAmm(chainId),
    connectors: [...(wrapped ? [wrapped] : []), ...usd],
    usdStables: usd,
    // nothing would read their transfers: indexed from the head, the holder sums are never complete
    trackedTokens: [],
    trackedPools: [],
    genesisHash: genesis.hash!,
    devnet: null,
  };
}

/** What the indexer of one network follows (GET /readyz `indexed`). */
export interface IndexingSummary {
  /** the settlement contract (trades, cancellations, pre-signatures) */
  settlement: string;
  /** tokens whose transfers are indexed: their top holders are served from our own index */
  holderTokens: string[];
  /** AMM pools followed (prices, slippage, yield), besides those a devnet factory creates */
  pools: number;
  /** a factory whose new pools are followed, if any */
  factory: string | null;
}

/** The Uniswap-V2 factory whose new pools the indexer follows: only the devnet's own (following a mainnet-sized factory would index every pair there is). */
export function indexedFactory(network: Pick<ChainNetwork, 'devnet' | 'amm'>): Address | null {
  return network.devnet ? (network.amm?.factory ?? null) : null;
}

/** What the indexer of a network follows, as GET /readyz shows it. */
export function indexingSummary(network: ChainNetwork): IndexingSummary {
  return { settlement: network.settlement, holderTokens: network.trackedTokens, pools: network.trackedPools.length, factory: indexedFactory(network)?.toLowerCase() ?? null };
}
