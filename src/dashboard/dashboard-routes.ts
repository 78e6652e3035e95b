/**
 * The dashboard's read-only JSON under /dashboard/api (errors `{message}`), and the devnet's "Trade a CoW".
 * Each route answers 200 for "no data yet" so that the page never sees a 404 while it polls; 404 only for an
 * unknown network or order.
 */
import { Type } from '@sinclair/typebox';
import type { Address, Hex } from 'viem';
import type { HttpServer } from '../http/server.js';
import { sendJson } from '../http/server.js';
import { AuxError } from '../http/errors.js';
import { MARKET_ERROR_STATUS, MarketError } from '../aux/market/market-error.js';
import type { DashboardReads } from './dashboard-reads.js';
import { CowDemoError, type CowDemo } from './trade-a-cow.js';

export interface DashboardNetwork {
  name: string;
  chainId: number;
  devnet: boolean;
  isDefault: boolean;
  blockTime: number | null;
  reads: DashboardReads;
  cowDemo: CowDemo | null;
}

export interface DashboardRoutesContext {
  networks: DashboardNetwork[];
}

const ADDRESS = '^0x[0-9a-fA-F]{40}$';
const Message = Type.Object({ message: Type.String() });
const NetworkParam = Type.Object({ network: Type.String({ maxLength: 64, description: 'network name (devnet, mainnet, …) or chain id' }) });
const Limit = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) });
const AddressString = Type.String({ pattern: ADDRESS });
const HexString = Type.String({ pattern: '^0x[0-9a-f]*$' });
const AnyRecord = Type.Object({}, { additionalProperties: true });
const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);

const Competition = Type.Object({
  auctionId: Type.Integer(),
  startBlock: Type.Integer(),
  deadlineBlock: Type.Integer(),
  orderCount: Type.Integer(),
  transactionHashes: Type.Array(HexString),
  winner: Type.Union([Type.String(), Type.Null()]),
  solutions: Type.Array(
    Type.Object({ solver: Type.String(), solverAddress: Type.String(), score: Type.String(), ranking: Type.Integer(), isWinner: Type.Boolean(), filteredOut: Type.Boolean(), orderCount: Type.Integer() }),
  ),
});
const Overview = Type.Object({
  network: Type.String(),
  chainId: Type.Integer(),
  headBlock: Type.Union([Type.Integer(), Type.Null()]),
  auction: Type.Union([
    Type.Object({ id: Type.Integer(), block: Type.Integer(), orderCount: Type.Integer(), orders: Type.Array(HexString), prices: Type.Record(Type.String(), Type.String()) }),
    Type.Null(),
  ]),
  latestCompetition: Type.Union([Competition, Type.Null()]),
});
const Trade = Type.Object({
  blockNumber: Type.Integer(), logIndex: Type.Integer(), orderUid: HexString, owner: HexString, trader: HexString, kind: Type.String(), sellToken: HexString, buyToken: HexString,
  sellAmount: Type.String(), buyAmount: Type.String(), surplus: Type.String(), surplusToken: HexString, txHash: HexString, timestamp: Type.Union([Type.String(), Type.Null()]),
});
const Lifecycle = Type.Object({
  events: Type.Array(Type.Object({ timestamp: Type.String(), label: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) })),
  trades: Type.Array(AnyRecord),
  competition: Type.Union([Competition, Type.Null()]),
});
const Market = Type.Object({
  tokens: Type.Array(Type.Object({ address: HexString, symbol: Type.String(), decimals: Type.Integer(), usdPrice: Nullable(Type.Number()) })),
  pools: Type.Array(
    Type.Object({
      address: HexString, token0: Type.Union([HexString, Type.Null()]), token1: Type.Union([HexString, Type.Null()]),
      tvl: Nullable(Type.Number()), volume: Nullable(Type.Number()), apr: Nullable(Type.Number()), slippageBps: Nullable(Type.Number()),
    }),
  ),
});
const History = Type.Object({ source: Type.Union([Type.String(), Type.Null()]), points: Type.Array(Type.Object({ t: Type.Number(), price: Type.Number() })) });
const CowOrders = Type.Object({
  orders: Type.Array(Type.Object({ uid: HexString, owner: HexString, sellToken: HexString, buyToken: HexString, sellAmount: Type.String(), buyAmount: Type.String() })),
});

const COW_STATUS: Record<CowDemoError['code'], number> = { NotDevnet: 403, NoMarket: 503, OutOfFunds: 409 };

export function registerDashboardRoutes(server: HttpServer, ctx: DashboardRoutesContext): void {
  const tags = ['dashboard'];
  const config = { api: 'aux' as const };
  const networkOf = (raw: string): DashboardNetwork => {
    const found = ctx.networks.find((n) => n.name === raw.toLowerCase() || String(n.chainId) === raw);
    if (!found) throw new AuxError(404, `network ${raw.slice(0, 64)} is not served here (served: ${ctx.networks.map((n) => n.name).join(', ') || 'none'})`);
    return found;
  };

  server.get(
    '/dashboard/api/networks',
    { schema: { tags, summary: 'The networks served, for the dashboard’s network picker', response: { 200: Type.Array(Type.Object({ name: Type.String(), chainId: Type.Integer(), devnet: Type.Boolean(), isDefault: Type.Boolean(), blockTime: Nullable(Type.Number()) })) } }, config },
    async (_req, reply) => sendJson(reply, 200, ctx.networks.map(({ name, chainId, devnet, isDefault, blockTime }) => ({ name, chainId, devnet, isDefault, blockTime }))),
  );

  server.get(
    '/dashboard/api/:network/overview',
    { schema: { tags, summary: 'Head block, the current auction (null before the first) and the latest solver competition', params: NetworkParam, response: { 200: Overview, 404: Message } }, config },
    async (req, reply) => {
      const network = networkOf(req.params.network);
      return sendJson(reply, 200, { network: network.name, chainId: network.chainId, ...(await network.reads.overview()) });
    },
  );

  server.get(
    '/dashboard/api/:network/competitions',
    { schema: { tags, summary: 'Recent auctions with their solver competition (scores, winner, settlement transactions), newest first', params: NetworkParam, querystring: Limit, response: { 200: Type.Array(Competition), 400: Message, 404: Message } }, config },
    async (req, reply) => sendJson(reply, 200, await networkOf(req.params.network).reads.competitions(req.query.limit ?? 20)),
  );

  registerOrderReads(server, networkOf);
  registerMarketReads(server, networkOf);
  registerAccountAndDemo(server, networkOf);
}

function registerOrderReads(server: HttpServer, networkOf: (raw: string) => DashboardNetwork): void {
  const tags = ['dashboard'];
  const config = { api: 'aux' as const };
  server.get(
    '/dashboard/api/:network/orders',
    { schema: { tags, summary: 'The latest orders of every account (order records), newest first', params: NetworkParam, querystring: Limit, response: { 200: Type.Array(AnyRecord), 400: Message, 404: Message } }, config },
    async (req, reply) => sendJson(reply, 200, await networkOf(req.params.network).reads.latestOrders(req.query.limit ?? 20)),
  );

  server.get(
    '/dashboard/api/:network/trades',
    { schema: { tags, summary: 'The latest trades of every account with their surplus over the limit price, newest first', params: NetworkParam, querystring: Limit, response: { 200: Type.Array(Trade), 400: Message, 404: Message } }, config },
    async (req, reply) => sendJson(reply, 200, await networkOf(req.params.network).reads.latestTrades(req.query.limit ?? 20)),
  );

  server.get(
    '/dashboard/api/:network/orders/:uid/lifecycle',
    {
      schema: {
        tags, summary: 'An order’s lifecycle events (with reasons), its trades and the latest competition that proposed it',
        params: Type.Object({ network: NetworkParam.properties.network, uid: Type.String({ pattern: '^0x[0-9a-fA-F]{112}$' }) }),
        response: { 200: Lifecycle, 400: Message, 404: Message },
      },
      config,
    },
    async (req, reply) => {
      const found = await networkOf(req.params.network).reads.lifecycle(req.params.uid as Hex);
      if (!found) throw new AuxError(404, `order ${req.params.uid.toLowerCase()} not found`);
      return sendJson(reply, 200, found);
    },
  );
}

function registerMarketReads(server: HttpServer, networkOf: (raw: string) => DashboardNetwork): void {
  const tags = ['dashboard'];
  const config = { api: 'aux' as const };
  server.get(
    '/dashboard/api/:network/market',
    { schema: { tags, summary: 'USD prices of the network’s tokens; TVL, 24 h volume, APR and recommended slippage of its pools (null where unknown)', params: NetworkParam, response: { 200: Market, 404: Message } }, config },
    async (req, reply) => sendJson(reply, 200, await networkOf(req.params.network).reads.marketOverview()),
  );

  server.get(
    '/dashboard/api/:network/markets/:base-:quote/history',
    {
      schema: {
        tags, summary: 'Price of base in quote over the last 24 h from the indexed pool history (t: unix ms); empty when there is none',
        params: Type.Object({ network: NetworkParam.properties.network, base: AddressString, quote: AddressString }),
        response: { 200: History, 400: Message, 404: Message, 500: Message },
      },
      config,
    },
    async (req, reply) => {
      const network = networkOf(req.params.network);
      if (req.params.base.toLowerCase() === req.params.quote.toLowerCase()) throw new AuxError(400, 'quote: must differ from base');
      try {
        return sendJson(reply, 200, await network.reads.priceHistory(req.params.base.toLowerCase() as Address, req.params.quote.toLowerCase() as Address));
      } catch (err) {
        // e.g. the native asset against its own wrapped token (Invalid → 400), market data unavailable (→ 500)
        if (err instanceof MarketError) throw new AuxError(MARKET_ERROR_STATUS[err.kind], err.message);
        throw err;
      }
    },
  );
}

function registerAccountAndDemo(server: HttpServer, networkOf: (raw: string) => DashboardNetwork): void {
  const tags = ['dashboard'];
  const config = { api: 'aux' as const };
  server.get(
    '/dashboard/api/:network/accounts/:address/notifications',
    {
      schema: {
        tags, summary: 'An account’s notifications when this node serves the notifications API (available: false otherwise)',
        params: Type.Object({ network: NetworkParam.properties.network, address: AddressString }),
        response: { 200: Type.Object({ available: Type.Boolean(), notifications: Type.Unknown() }), 400: Message, 404: Message },
      },
      config,
    },
    async (req, reply) => {
      const network = networkOf(req.params.network);
      // asked in-process, so a node without the notifications API (404/503) shows no error in the browser; the
      // API lists the account's notifications of every network: the dashboard shows this network's
      const answer = await server.inject({ method: 'GET', url: `/accounts/${req.params.address.toLowerCase()}/notifications?limit=100` });
      if (answer.statusCode !== 200) return sendJson(reply, 200, { available: false, notifications: null });
      const all = answer.json() as Array<{ metadata?: { chainId?: unknown } }>;
      return sendJson(reply, 200, { available: true, notifications: all.filter((n) => n.metadata?.chainId === network.chainId) });
    },
  );

  server.post(
    '/dashboard/api/:network/trade-a-cow',
    {
      schema: {
        tags, summary: 'Devnet only: the two demo traders place opposite orders (signed with the devnet’s keys) for the next auction to match',
        params: NetworkParam,
        response: { 201: CowOrders, 403: Message, 404: Message, 409: Message, 503: Message },
      },
      config,
    },
    async (req, reply) => {
      const network = networkOf(req.params.network);
      if (!network.cowDemo) throw new AuxError(403, `"Trade a CoW" runs on the devnet only; ${network.name} is a real chain`);
      try {
        return sendJson(reply, 201, { orders: await network.cowDemo.place() });
      } catch (err) {
        if (err instanceof CowDemoError) throw new AuxError(COW_STATUS[err.code], err.message);
        throw err;
      }
    },
  );
}
