/**
 * Known Uniswap-V2-style deployments per chain, used for first-party pricing on real chains (the devnet
 * reports its own). Addresses from the projects' public deployment lists; a chain missing here simply has no
 * first-party AMM pricing (configure an external estimator).
 */
import type { Address } from 'viem';

export interface AmmDeployment {
  name: string;
  factory: Address;
  router: Address;
}

const KNOWN: Record<number, AmmDeployment> = {
  1: { name: 'uniswap-v2', factory: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f', router: '0x7a250d5630b4cf539739df2c5dacb4c659f2488d' },
  100: { name: 'honeyswap', factory: '0xa818b4f111ccac7aa31d0bcc0806d64f2e0737d7', router: '0x1c232f01118cb8b424793ae03f870aa7d0ac7f77' },
  8453: { name: 'uniswap-v2', factory: '0x8909dc15e40173ff4699343b6eb8132c65e18ec6', router: '0x4752ba5dbc23f44d87826276bf6fd6b1c372ad24' },
  42161: { name: 'uniswap-v2', factory: '0xf1d7cc64fb4452f05c498126312ebe29f30fbcf9', router: '0x4752ba5dbc23f44d87826276bf6fd6b1c372ad24' },
  11155111: { name: 'uniswap-v2', factory: '0xf62c03e08ada871a0beb309762e260a7a6a880e6', router: '0xee567fe1712faf6149d80da1e6934e354124cfe3' },
};

export function knownAmm(chainId: number): AmmDeployment | null {
  return KNOWN[chainId] ?? null;
}

/** USD stablecoins per chain (6-decimal USDC where known), the quote asset of USD prices. */
const USD_STABLES: Record<number, Address[]> = {
  1: ['0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', '0x6b175474e89094c44da98b954eedeac495271d0f'],
  100: ['0xddafbb505ad214d7b80b1f830fccc89b60fb7a83'],
  8453: ['0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'],
  42161: ['0xaf88d065e77c8cc2239327c5edb3a432268e5831'],
  11155111: ['0x1c7d4b196cb0c7b01d743fbc6116a902379c7238'],
};

export function knownUsdStables(chainId: number): Address[] {
  return USD_STABLES[chainId] ?? [];
}

/** Well-known majors per chain besides the wrapped native token and the USD stablecoins (fork mode lists those with code). */
const MAJORS: Record<number, Address[]> = {
  // WBTC, USDT, COW
  1: ['0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', '0xdac17f958d2ee523a2206206994597c13d831ec7', '0xdef1ca1fb7fbcdc777520aa7f396b4e015f497ab'],
};

export function knownMajorTokens(chainId: number): Address[] {
  return MAJORS[chainId] ?? [];
}
