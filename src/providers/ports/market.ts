/**
 * The data the market services need, as `DataSource` ports. The first-party sources (on-chain pools, the indexed
 * database) and the external adapters in src/providers implement the same ports, so the composition is
 * `fallback([cached(firstParty, ...), cached(external, ...)])` per port.
 */
import type { Address } from 'viem';
import type { DataSource } from '../data-source.js';

// ---- USD prices ----------------------------------------------------------------------------------------

export interface UsdPriceQuery {
  chainId: number;
  /** lowercase ERC-20 address (the native asset is asked as the wrapped native token) */
  token: Address;
}

/** USD per whole token (10^decimals atoms). */
export type UsdPriceSource = DataSource<UsdPriceQuery, number>;

// ---- top holders ---------------------------------------------------------------------------------------

export interface HoldersQuery {
  chainId: number;
  /** lowercase */
  token: Address;
}

export interface TokenHolder {
  /** lowercase */
  address: Address;
  /** atoms */
  balance: bigint;
}

/** Up to `MAX_HOLDERS` holders, largest first. */
export type TokenHolderSource = DataSource<HoldersQuery, TokenHolder[]>;

export const MAX_HOLDERS = 100;

// ---- price samples for volatility ----------------------------------------------------------------------

export interface MarketSamplesQuery {
  chainId: number;
  /** lowercase; the native asset is asked as the wrapped native token */
  base: Address;
  quote: Address;
  /** window, unix ms */
  fromMs: number;
  toMs: number;
}

export interface PricePoint {
  /** sample time, unix ms (aligned to the sample step) */
  t: number;
  /** price in the numeraire, per whole token */
  price: number;
}

export interface MarketSamples {
  /** what both series are priced in: "usd", or a token address (e.g. the wrapped native token) */
  numeraire: string;
  /** nominal spacing of the samples, ms */
  stepMs: number;
  base: PricePoint[];
  quote: PricePoint[];
  /** how each series was obtained, for diagnostics (e.g. pools used) */
  route?: { base: string[]; quote: string[] };
}

export type MarketSamplesSource = DataSource<MarketSamplesQuery, MarketSamples>;

// ---- liquidity pools (spec §2 Pool) -------------------------------------------------------------------

export interface PoolRecord {
  contract_address: Address;
  chain_id: number;
  project: string;
  /** percent per year for liquidity providers, 6 decimals; null when not known */
  apr: number | null;
  /** fee tier, percent (Uniswap V2: 0.3) */
  fee: number | null;
  /** USD, current snapshot; null when no token of the pool has a USD price */
  tvl: number | null;
  /** USD traded over the last 24 hours; null when not known */
  volume: number | null;
}

export interface PoolQuery {
  chainId: number;
  /** lowercase, deduplicated; null: the top pools by TVL */
  addresses: Address[] | null;
  /** at most this many pools (top by TVL when addresses is null) */
  limit: number;
}

export type PoolSource = DataSource<PoolQuery, PoolRecord[]>;
