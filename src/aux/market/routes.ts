/**
 * Market routes of the auxiliary API (spec §4.1, §4.4, §4.6), errors `{message}`:
 *
 *   GET  /{chainId}/tokens/{tokenAddress}/usdPrice                          → {price}
 *   GET  /{chainId}/tokens/{tokenAddress}/topHolders?limit=                 → [{address, balance}]
 *   GET  /{chainId}/markets/{base}-{quote}/slippageTolerance?...            → {slippageBps}
 *   GET  /{chainId}/markets/{base}-{quote}/volatilityDetails?... (hidden)   → the computation, step by step
 *   POST /{chainId}/yield/pools  [addresses]                                → [Pool]
 *   GET  /{chainId}/yield/pools-average-apr                                 → {project: apr}
 *
 * {chainId} is a served chain's numeric id or network name (`mainnet`, `xdai`, `devnet`, any case); an unknown
 * chain is 404. Routes only translate HTTP ↔ service calls; everything else lives in the services.
 *
 * @example
 *   registerMarketRoutes(server, { chains: new Map([[network.chainId, { network, ...buildMarketServices(network, db, config) }]]) });
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { maxUint256, type Address } from 'viem';
import type { ChainNetwork } from '../../chain/network.js';
import { AuxError } from '../../http/errors.js';
import type { HttpServer } from '../../http/server.js';
import { MAX_BODY_LIMIT, sendJson } from '../../http/server.js';
import { parseChainParam } from '../../protocol/networks.js';
import { MARKET_ERROR_STATUS, MarketError } from './market-error.js';
import { MAX_HOLDERS } from '../../providers/ports/market.js';
import type { MarketServices } from './build-services.js';
import type { SlippageParams } from './slippage/slippage-service.js';
import { MAX_POOLS } from './yield/yield-service.js';

export interface MarketChainContext extends MarketServices {
  network: ChainNetwork;
}

export interface MarketRoutesContext {
  /** chain id → the chain and its market services */
  chains: ReadonlyMap<number, MarketChainContext>;
}

/** 1000 addresses as compact JSON are ≈ 45 KB, pretty-printed ≈ 48 KB: 56 KiB lets the 1001st be refused by the
 *  schema with a 400 naming the limit rather than a bare 413. */
export const YIELD_POOLS_BODY_LIMIT = Math.min(56 * 1024, MAX_BODY_LIMIT);

const ADDRESS = '^0x[0-9a-fA-F]{40}$';
const Message = Type.Object({ message: Type.String() });
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Message]));
const ChainParam = Type.String({ maxLength: 64, description: 'numeric chain id (e.g. 1, 100, 31337) or network name (mainnet, xdai, devnet, ...)' });
const AddressParam = Type.String({ pattern: ADDRESS, description: '0x-prefixed 20-byte address, any letter case' });
const Amount = Type.String({ pattern: '^[0-9]{1,78}$', description: 'unsigned integer (atoms) as a decimal string' });
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

const PoolSchema = Type.Object({
  contract_address: Type.String(),
  chain_id: Type.Integer(),
  project: Type.String(),
  apr: NullableNumber,
  fee: NullableNumber,
  tvl: NullableNumber,
  volume: NullableNumber,
});

const SlippageQuery = Type.Object({
  orderKind: Type.Optional(Type.Unsafe<'buy' | 'sell'>({ type: 'string', enum: ['buy', 'sell'], description: 'which amount applies: sell → sellAmount, buy → buyAmount' })),
  partiallyFillable: Type.Optional(Type.Boolean({ description: 'true halves the volatility and price-impact parts' })),
  sellAmount: Type.Optional({ ...Amount, description: 'base-token atoms sold: adds its price impact against current pool reserves' }),
  buyAmount: Type.Optional({ ...Amount, description: 'quote-token atoms bought (buy orders): adds its price impact' }),
  expirationTimeInSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 31_536_000, description: 'how long the order is valid: scales the volatility part by √(clamp(T, 300, 86400)/300)' })),
  feeAmount: Type.Optional({ ...Amount, description: 'sell-token atoms of network fee: with sellAmount, adds half the fee share' }),
});

const SLIPPAGE_DESCRIPTION = [
  'Recommended slippage tolerance for selling `base` for `quote`, from the volatility of the base/quote price over the last 24 hours of 5-minute samples',
  '(first-party: indexed pool Syncs, priced in the wrapped native token or a USD stablecoin, last value carried forward; else Coingecko):',
  'σ of the ratio (population) ÷ the current ratio, scaled by √(5 min / sample spacing), in bps rounded up, clamped to 0..10000.',
  '',
  'Optional parameters, when given: `expirationTimeInSeconds` T scales the volatility part by √(clamp(T, 300, 86400) / 300);',
  '`sellAmount` (base atoms; for `orderKind=sell` or unset) or `buyAmount` (quote atoms; for `orderKind=buy`) adds the amount\'s price impact against the current reserves of the best first-party route;',
  '`feeAmount` (base atoms, with `sellAmount`) adds 50 % of feeAmount ÷ sellAmount; `partiallyFillable=true` halves the volatility and impact parts.',
  'Without parameters the answer is ceil(volatility × 10000). 404 when there is no market data for the pair.',
].join('\n');

function resolveChain(chains: ReadonlyMap<number, MarketChainContext>, raw: string): MarketChainContext {
  const byId = /^[0-9]{1,20}$/.test(raw) ? chains.get(Number(raw)) : undefined;
  if (byId) return byId;
  const known = parseChainParam(raw);
  const byKnown = known ? chains.get(known.chainId) : undefined;
  if (byKnown) return byKnown;
  const name = raw.toLowerCase();
  for (const chain of chains.values()) if (chain.network.name.toLowerCase() === name) return chain;
  const served = [...chains.values()].map((c) => `${c.network.chainId} (${c.network.name})`).join(', ') || 'none';
  throw new AuxError(404, `chain ${raw.slice(0, 64)} is not served here (served: ${served})`);
}

/** MarketError → the `{message}` envelope; anything else goes to the global handler (500). */
async function answer<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof MarketError) {
      const error = new AuxError(MARKET_ERROR_STATUS[err.kind], err.message);
      (error as Error & { cause?: unknown }).cause = err.cause;
      throw error;
    }
    throw err;
  }
}

function cacheFor(reply: FastifyReply, seconds: number): FastifyReply {
  return reply.header('cache-control', `public, max-age=${Math.max(0, Math.floor(seconds))}`);
}

function amount(raw: string | undefined, field: string): bigint | undefined {
  if (raw === undefined) return undefined;
  const value = BigInt(raw);
  if (value > maxUint256) throw new AuxError(400, `${field}: exceeds uint256`);
  return value;
}

function slippageParams(query: { orderKind?: 'buy' | 'sell'; partiallyFillable?: boolean; sellAmount?: string; buyAmount?: string; expirationTimeInSeconds?: number; feeAmount?: string }): SlippageParams {
  const params: SlippageParams = {
    orderKind: query.orderKind,
    partiallyFillable: query.partiallyFillable,
    sellAmount: amount(query.sellAmount, 'sellAmount'),
    buyAmount: amount(query.buyAmount, 'buyAmount'),
    expirationTimeInSeconds: query.expirationTimeInSeconds,
    feeAmount: amount(query.feeAmount, 'feeAmount'),
  };
  if (params.sellAmount === 0n) throw new AuxError(400, 'sellAmount: must be greater than 0');
  if (params.buyAmount === 0n) throw new AuxError(400, 'buyAmount: must be greater than 0');
  return params;
}

export function registerMarketRoutes(server: HttpServer, ctx: MarketRoutesContext): void {
  const tags = ['auxiliary'];
  const chainOf = (raw: string) => resolveChain(ctx.chains, raw);

  server.get(
    '/:chainId/tokens/:tokenAddress/usdPrice',
    {
      schema: {
        tags,
        summary: 'USD price of a token',
        description:
          'USD per whole token: first-party from on-chain pools (token → wrapped native → USD stablecoin, or through a connector), else the configured providers (Coingecko, a compatible order book). `-` (or 0xEeee…EEeE) prices the native asset as the wrapped native token. Answers carry `Cache-Control: public, max-age=<ttl>`. 404 when no source has a price (or the address is not an ERC-20 on the chain); 500 when no price could be obtained because a source failed (retry).',
        params: Type.Object({ chainId: ChainParam, tokenAddress: Type.String({ pattern: '^(0x[0-9a-fA-F]{40}|-)$', description: 'token address (any case), or - for the native asset' }) }),
        response: { 200: Type.Object({ price: Type.Number() }), ...errors(400, 404, 500) },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const token = req.params.tokenAddress === '-' ? 'native' : (req.params.tokenAddress.toLowerCase() as Address);
      const price = await answer(() => chain.usdPrices.usdPrice(token));
      return sendJson(cacheFor(reply, chain.usdPrices.maxAgeSeconds), 200, { price });
    },
  );

  server.get(
    '/:chainId/tokens/:tokenAddress/topHolders',
    {
      schema: {
        tags,
        summary: 'Largest holders of a token',
        description: `Holders by balance, largest first (balances in atoms, decimal strings): first-party from the indexed transfers (mints included) for tokens indexed from their deployment, else the configured holder APIs. \`limit\`: 1..${MAX_HOLDERS}, default ${MAX_HOLDERS}. 404 when the address is neither indexed nor an ERC-20 on the chain, or no source knows its holders.`,
        params: Type.Object({ chainId: ChainParam, tokenAddress: AddressParam }),
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HOLDERS, default: MAX_HOLDERS })) }),
        response: { 200: Type.Array(Type.Object({ address: Type.String(), balance: Type.String() })), ...errors(400, 404, 500) },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const holders = await answer(() => chain.holders.topHolders(req.params.tokenAddress.toLowerCase() as Address, req.query.limit ?? MAX_HOLDERS));
      return sendJson(cacheFor(reply, chain.holders.maxAgeSeconds), 200, holders.map((h) => ({ address: h.address, balance: h.balance.toString() })));
    },
  );

  const MarketParams = Type.Object({ chainId: ChainParam, baseTokenAddress: AddressParam, quoteTokenAddress: AddressParam });

  server.get(
    '/:chainId/markets/:baseTokenAddress-:quoteTokenAddress/slippageTolerance',
    {
      schema: {
        tags,
        summary: 'Recommended slippage tolerance for a market',
        description: SLIPPAGE_DESCRIPTION,
        params: MarketParams,
        querystring: SlippageQuery,
        response: { 200: Type.Object({ slippageBps: Type.Integer({ minimum: 0, maximum: 10_000 }) }), ...errors(400, 404, 500) },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const params = slippageParams(req.query);
      const slippageBps = await answer(() => chain.slippage.recommend(req.params.baseTokenAddress as Address, req.params.quoteTokenAddress as Address, params));
      return sendJson(cacheFor(reply, chain.slippage.maxAgeSeconds), 200, { slippageBps });
    },
  );

  server.get(
    '/:chainId/markets/:baseTokenAddress-:quoteTokenAddress/volatilityDetails',
    {
      // internal debugging (spec §4.4): not in the OpenAPI document
      schema: { hide: true, params: MarketParams, querystring: SlippageQuery },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const params = slippageParams(req.query);
      const details = await answer(() => chain.slippage.details(req.params.baseTokenAddress as Address, req.params.quoteTokenAddress as Address, params));
      return sendJson(cacheFor(reply, chain.slippage.maxAgeSeconds), 200, details);
    },
  );

  server.post(
    '/:chainId/yield/pools',
    {
      schema: {
        tags,
        summary: 'Liquidity pool APR, fee, TVL and 24 h volume',
        description: `Body: a JSON array of up to ${MAX_POOLS} pool addresses; an empty array returns the top pools by TVL (up to ${MAX_POOLS}). Pools are answered in the order asked; pools that are not known are omitted. First-party pools: TVL from current reserves × USD prices, volume = 24 h swap inputs × current USD prices, fee 0.3 (Uniswap V2), apr = volume × fee% × 365 ÷ TVL × 100 (6 decimals). apr/tvl/volume are null when a pool cannot be valued in USD (incomplete data).`,
        params: Type.Object({ chainId: ChainParam }),
        body: Type.Array(AddressParam, { maxItems: MAX_POOLS }),
        response: { 200: Type.Array(PoolSchema), ...errors(400, 404, 413, 500) },
      },
      bodyLimit: YIELD_POOLS_BODY_LIMIT,
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const addresses = req.body.length === 0 ? null : req.body.map((a) => a.toLowerCase() as Address);
      const pools = await answer(() => chain.yields.pools(addresses));
      return sendJson(reply, 200, pools);
    },
  );

  server.get(
    '/:chainId/yield/pools-average-apr',
    {
      schema: {
        tags,
        summary: 'Average APR per liquidity protocol',
        description: 'An object mapping each project (e.g. `uniswap-v2`) to the mean APR (percent, 6 decimals) of its pools with a known APR among the top pools by TVL; `{}` when none. Cached 6 hours (`Cache-Control: public, max-age=21600`).',
        params: Type.Object({ chainId: ChainParam }),
        response: { 200: Type.Record(Type.String(), Type.Number()), ...errors(400, 404, 500) },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainOf(req.params.chainId);
      const average = await answer(() => chain.yields.averageApr());
      return sendJson(cacheFor(reply, chain.yields.averageAprMaxAgeSeconds), 200, average);
    },
  );
}
