/**
 * What the dashboard shows of one network, assembled from the services the API already uses (auction store,
 * competitions, orders, trades, market services) and the dashboard store. Every read answers something for
 * "no data yet" (null, []) so that the page never polls an endpoint that answers 404 before data exists.
 */
import type { Address, Hex } from 'viem';
import type { ChainNetwork } from '../chain/network.js';
import type { OrderBookNetworkServices } from '../orderbook/routes/context.js';
import type { AuctionReads } from '../auction/auction-routes.js';
import type { MarketServices } from '../aux/market/index.js';
import type { StoredCompetition } from '../auction/competition-store.js';
import type { DashboardStore, DashboardOrderEvent, DashboardTrade } from './dashboard-store.js';

export interface CompetitionSummary {
  auctionId: number;
  startBlock: number;
  deadlineBlock: number;
  orderCount: number;
  transactionHashes: Hex[];
  /** the winning solver's name, null when no solution won */
  winner: string | null;
  solutions: Array<{ solver: string; solverAddress: string; score: string; ranking: number; isWinner: boolean; filteredOut: boolean; orderCount: number }>;
}

export interface AuctionSummary {
  id: number;
  block: number;
  orderCount: number;
  /** the first orders of the auction (UIDs) */
  orders: Hex[];
  prices: Record<string, string>;
}

export interface MarketToken {
  address: Address;
  symbol: string;
  decimals: number;
  usdPrice: number | null;
}

export interface MarketPool {
  address: Address;
  token0: Address | null;
  token1: Address | null;
  tvl: number | null;
  volume: number | null;
  apr: number | null;
  /** recommended slippage for selling token0 for token1, null without market data */
  slippageBps: number | null;
}

const AUCTION_ORDERS_SHOWN = 50;
const MARKET_TOKENS_SHOWN = 20;

export function summarizeCompetition(c: StoredCompetition): CompetitionSummary {
  return {
    auctionId: c.auctionId,
    startBlock: c.startBlock,
    deadlineBlock: c.deadlineBlock,
    orderCount: c.auction.orders.length,
    transactionHashes: c.transactionHashes,
    winner: c.solutions.find((s) => s.isWinner)?.solver ?? null,
    solutions: c.solutions.map((s) => ({
      solver: s.solver, solverAddress: s.solverAddress, score: s.score, ranking: s.ranking, isWinner: s.isWinner, filteredOut: s.filteredOut, orderCount: s.orders.length,
    })),
  };
}

export class DashboardReads {
  constructor(
    private readonly network: ChainNetwork,
    private readonly orderBook: OrderBookNetworkServices,
    private readonly auctionReads: AuctionReads,
    private readonly market: MarketServices | null,
    private readonly store: DashboardStore,
  ) {}

  async overview(): Promise<{ headBlock: number | null; auction: AuctionSummary | null; latestCompetition: CompetitionSummary | null }> {
    const { auctions, competitions } = this.auctionReads;
    const [head, auction, latest] = await Promise.all([this.network.reader.blockNumber().then(Number, () => null), auctions.current(), competitions.latest()]);
    return {
      headBlock: head,
      auction: auction
        ? { id: auction.id, block: auction.block, orderCount: auction.orders.length, orders: auction.orders.slice(0, AUCTION_ORDERS_SHOWN).map((o) => o.uid as Hex), prices: auction.prices }
        : null,
      latestCompetition: latest ? summarizeCompetition(latest) : null,
    };
  }

  async competitions(limit: number): Promise<CompetitionSummary[]> {
    return (await this.auctionReads.competitions.recent(limit)).map(summarizeCompetition);
  }

  async latestOrders(limit: number): Promise<Record<string, unknown>[]> {
    const uids = await this.store.latestOrderUids(this.network.chainId, limit);
    const records = await this.orderBook.orders.getMany(uids);
    const rank = new Map(uids.map((u, i) => [u, i]));
    return records.sort((a, b) => (rank.get(a.uid as Hex) ?? 0) - (rank.get(b.uid as Hex) ?? 0));
  }

  latestTrades(limit: number): Promise<DashboardTrade[]> {
    return this.store.latestTrades(this.network.chainId, limit);
  }

  /** An order's lifecycle events, trades and the latest competition that proposed it (null: unknown order). */
  async lifecycle(uid: Hex): Promise<{ events: DashboardOrderEvent[]; trades: unknown[]; competition: CompetitionSummary | null } | null> {
    const order = await this.orderBook.orders.get(uid);
    if (!order) return null;
    const [events, trades, competition] = await Promise.all([
      this.store.orderEvents(this.network.chainId, uid.toLowerCase() as Hex),
      this.orderBook.trades.list({ orderUid: uid.toLowerCase() as Hex }, null),
      this.auctionReads.competitions.latestForOrder(uid.toLowerCase() as Hex),
    ]);
    // who traded: for an eth-flow order whoever placed it (the trades' owner is the contract)
    const sender = (order.onchainOrderData as { sender?: Address } | undefined)?.sender;
    const withTrader = trades.map((t) => ({ ...t, trader: sender ?? t.owner }));
    return { events, trades: withTrader, competition: competition ? summarizeCompetition(competition) : null };
  }

  /** USD prices of the network's tokens and its pools' TVL, volume, APR and slippage (nulls where unknown). */
  async marketOverview(): Promise<{ tokens: MarketToken[]; pools: MarketPool[] }> {
    const { network, market } = this;
    const tokens = await this.tokens();
    if (!market) return { tokens, pools: [] };
    const priced = await Promise.all(tokens.map(async (t) => ({ ...t, usdPrice: await market.usdPrices.usdPriceOrNull(t.address) })));
    const tracked = new Map(network.trackedPools.map((p) => [p.address.toLowerCase(), p]));
    const records = await market.yields.pools(tracked.size > 0 ? [...tracked.keys()] as Address[] : null).catch(() => []);
    const pools = await Promise.all(
      records.map(async (r) => {
        const pair = tracked.get(r.contract_address.toLowerCase()) ?? null;
        const slippageBps = pair ? await market.slippage.recommend(pair.token0, pair.token1).catch(() => null) : null;
        return { address: r.contract_address, token0: pair?.token0 ?? null, token1: pair?.token1 ?? null, tvl: r.tvl, volume: r.volume, apr: r.apr, slippageBps };
      }),
    );
    return { tokens: priced, pools };
  }

  /** Price of base in quote over the last 24 h from the indexed pool history ([] when none). */
  async priceHistory(base: Address, quote: Address): Promise<{ source: string | null; points: Array<{ t: number; price: number }> }> {
    const history = this.market ? await this.market.slippage.priceHistory(base, quote) : null;
    return history ?? { source: null, points: [] };
  }

  private async tokens(): Promise<MarketToken[]> {
    const devnetTokens = this.network.devnet?.describe().tokens;
    if (devnetTokens) return devnetTokens.map((t) => ({ address: t.address.toLowerCase() as Address, symbol: t.symbol, decimals: t.decimals, usdPrice: null }));
    const found = await Promise.all(
      this.network.trackedTokens.slice(0, MARKET_TOKENS_SHOWN).map(async (address): Promise<MarketToken | null> => {
        const meta = await this.network.reader.tokenMetadata(address).catch(() => null);
        return meta ? { address, symbol: meta.symbol ?? '', decimals: meta.decimals, usdPrice: null } : null;
      }),
    );
    return found.filter((t): t is MarketToken => t !== null);
  }
}
