/**
 * The batch auction and the solver competition (spec §4.8; reference orderbook.md §3.8, §3.9, §8):
 * GET /api/v1/auction, and /api/v{1,2}/solver_competition/{auction_id | latest | by_tx_hash/{txHash}} in the v1
 * (spec) and v2 (SDK) shapes, both from one store. 404 `NotFound` when absent; 400 `InvalidParameter` for a
 * malformed id or hash; an id beyond i64 is absent (404), as upstream.
 */
import { Type } from '@sinclair/typebox';
import type { Hex } from 'viem';
import type { HttpServer } from '../http/server.js';
import { sendJson } from '../http/server.js';
import { OrderBookError } from '../protocol/order-book-error.js';
import { Hex32, errorResponses } from '../orderbook/schemas.js';
import { storedAuctionText, type AuctionStore } from './auction-store.js';
import { competitionV1, competitionV2, type CompetitionStore, type StoredCompetition } from './competition-store.js';

export interface AuctionReads {
  auctions: AuctionStore;
  competitions: CompetitionStore;
}

const MAX_I64 = 2n ** 63n - 1n;
const AuctionId = Type.String({ pattern: '^[0-9]+$', description: 'auction id (unsigned integer)' });
const AnyRecord = Type.Object({}, { additionalProperties: true });

/** Whether an Accept-Encoding header allows gzip (named, or `*`, without q=0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : header ?? '';
  let star = false;
  for (const part of value.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding.trim() === 'gzip' || coding.trim() === 'x-gzip') return allowed;
    if (coding.trim() === '*') star = allowed;
  }
  return star;
}

export function registerAuctionRoutes(server: HttpServer, reads: AuctionReads): void {
  const ob = { api: 'orderbook' as const };
  const tags = ['orderbook'];

  server.get(
    '/api/v1/auction',
    { schema: { tags, summary: 'The current batch auction', response: { 200: AnyRecord, ...errorResponses(404) } }, config: ob },
    async (req, reply) => {
      const stored = await reads.auctions.currentStored();
      if (stored === null) throw new OrderBookError('NotFound', 'There is no active auction');
      reply.code(200).type('application/json; charset=utf-8').header('vary', 'accept-encoding');
      if ('text' in stored) return reply.send(stored.text);
      // stored compressed: as it is to a client that takes gzip (every HTTP client library does), else unpacked
      if (acceptsGzip(req.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(stored.gzip);
      return reply.send(await storedAuctionText(stored));
    },
  );

  const notFound = () => new OrderBookError('NotFound', 'solver competition not found');
  const byId = async (id: string): Promise<StoredCompetition> => {
    const n = BigInt(id);
    // our auction ids are JavaScript integers: anything beyond them (up to and past i64) is simply absent
    if (n > MAX_I64 || n > BigInt(Number.MAX_SAFE_INTEGER)) throw notFound();
    const found = await reads.competitions.byAuctionId(Number(n));
    if (!found) throw notFound();
    return found;
  };
  const latest = async (): Promise<StoredCompetition> => {
    const found = await reads.competitions.latest();
    if (!found) throw notFound();
    return found;
  };
  const byTx = async (hash: string): Promise<StoredCompetition> => {
    const found = await reads.competitions.byTxHash(hash.toLowerCase() as Hex);
    if (!found) throw notFound();
    return found;
  };

  for (const [version, render] of [
    ['v1', competitionV1],
    ['v2', competitionV2],
  ] as const) {
    const base = `/api/${version}/solver_competition`;
    const response = { 200: AnyRecord, ...errorResponses(400, 404) };
    server.get(`${base}/latest`, { schema: { tags, summary: `Latest solver competition (${version} shape)`, response }, config: ob }, async (_req, reply) =>
      sendJson(reply, 200, render(await latest())),
    );
    server.get(
      `${base}/by_tx_hash/:txHash`,
      { schema: { tags, summary: `Solver competition of a settlement transaction (${version} shape)`, params: Type.Object({ txHash: Hex32 }), response }, config: ob },
      async (req, reply) => sendJson(reply, 200, render(await byTx(req.params.txHash))),
    );
    server.get(
      `${base}/:auction_id`,
      { schema: { tags, summary: `Solver competition of an auction (${version} shape)`, params: Type.Object({ auction_id: AuctionId }), response }, config: ob },
      async (req, reply) => sendJson(reply, 200, render(await byId(req.params.auction_id))),
    );
  }
}
