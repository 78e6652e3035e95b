/**
 * GET /{chainId}/accounts/{userAddress}/balances       (spec §4.3) — balances and vault-relayer allowances
 * GET /{chainId}/accounts/{userAddress}/balances/sse   (spec §4.3, §6) — the same, as a live event stream
 *
 * Both take `tokens` (comma-separated addresses, at most `maxTokens` distinct) and answer with balance entries
 * (spec §2) in the order requested. The native asset is 0xEeee…EEeE (allowance = max uint256, metadata from
 * the chain's native currency). Addresses that are not ERC-20 tokens on the chain are left out of the array and
 * listed, lowercase and comma-separated, in the `X-Omitted-Tokens` response header.
 *
 * Errors are `{message}`: 400 (tokens missing or malformed, too many tokens, bad user address or chain id),
 * 404 (chain not served), 429 (too many streams from this IP), 503 (stream capacity reached), 500 (the chain
 * could not be read). For the stream, every error is answered before the stream starts.
 *
 * @example
 *   registerBalanceRoutes(server, { chains: [{ chainId, reader, vaultRelayer, nativeCurrency, stream }], caps, signal });
 */
import { Type } from '@sinclair/typebox';
import type { Address } from 'viem';
import type { HttpServer } from '../../http/server.js';
import { sendJson } from '../../http/server.js';
import { AuxError } from '../../http/errors.js';
import {
  BalanceEntrySchema,
  balanceEntries,
  resolveTokens,
  type MetadataSource,
  type NativeCurrency,
  type TokenInfo,
} from './balance-entry.js';
import { StreamClosedError, type BalanceStream, type BalanceWatch, type PairReader } from './balance-stream.js';
import { ConnectionLimiter, DEFAULT_CONNECTION_CAPS, type ConnectionCaps } from './connection-limiter.js';
import { SseConnection } from './sse-connection.js';
import { MAX_TOKENS_PER_REQUEST, parseTokenList, TokenListError } from './token-list.js';
import { clientKeyOf } from '../../http/client-identity.js';

export interface BalanceChainContext {
  chainId: number;
  /** a ChainReader */
  reader: PairReader & MetadataSource;
  vaultRelayer: Address;
  nativeCurrency: NativeCurrency;
  stream: BalanceStream;
}

export interface BalanceRoutesContext {
  chains: Iterable<BalanceChainContext>;
  /** concurrent stream caps for this process (defaults: 10 000 in total, 32 per IP) */
  caps?: Partial<ConnectionCaps>;
  /** distinct tokens per request or stream (default 100) */
  maxTokens?: number;
  /** spec §8: 20 s */
  pingIntervalMs?: number;
  /** a stream whose client has not drained a write for this long is closed (default 30 s) */
  stallTimeoutMs?: number;
  /** Cache-Control max-age of the REST answer (default 5 s) */
  cacheMaxAgeSeconds?: number;
  /** aborting ends every open stream (graceful shutdown); closing the server does the same */
  signal?: AbortSignal;
}

export interface BalanceRoutes {
  /** open streams of this registration */
  readonly connections: number;
  readonly limiter: ConnectionLimiter;
  /** ends every open stream */
  endAll(): void;
}

const Message = Type.Object({ message: Type.String() });

const Params = Type.Object({
  chainId: Type.String({ pattern: '^[0-9]{1,20}$', description: 'numeric chain id' }),
  userAddress: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'account address (any letter case)' }),
});

const Query = Type.Object({
  tokens: Type.Optional(
    Type.String({
      description:
        'required: comma-separated token addresses (any letter case; empty entries and duplicates ignored); 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE for the native asset',
    }),
  ),
});

const NOT_A_TOKEN_NOTE =
  'Addresses that are not ERC-20 tokens on this chain (no contract, or no readable `decimals()`) are left out of the array and listed in the `X-Omitted-Tokens` header; a token whose `balanceOf` reverts is left out likewise, and a failing `allowance` reads as 0.';

export function registerBalanceRoutes(server: HttpServer, ctx: BalanceRoutesContext): BalanceRoutes {
  const chains = new Map<number, BalanceChainContext>();
  for (const chain of ctx.chains) chains.set(chain.chainId, chain);
  const request: RequestReading = { chains, maxTokens: ctx.maxTokens ?? MAX_TOKENS_PER_REQUEST };
  const streams = new OpenStreams(ctx.pingIntervalMs ?? 20_000);
  if (ctx.signal?.aborted) streams.shuttingDown = true;
  ctx.signal?.addEventListener('abort', () => streams.endAll(), { once: true });
  server.addHook('preClose', async () => streams.endAll());

  registerBalancesRoute(server, request, ctx.cacheMaxAgeSeconds ?? 5);
  const limiter = new ConnectionLimiter({ ...DEFAULT_CONNECTION_CAPS, ...ctx.caps });
  registerBalanceStreamRoute(server, request, { streams, limiter, stallTimeoutMs: ctx.stallTimeoutMs });

  return {
    get connections() {
      return streams.size;
    },
    limiter,
    endAll: () => streams.endAll(),
  };
}

/** What both routes read a request with: the chains served and the token cap. */
interface RequestReading {
  chains: ReadonlyMap<number, BalanceChainContext>;
  maxTokens: number;
}

/** The served chain of a `chainId` path parameter, else 404. */
function chainFor(request: RequestReading, raw: string): BalanceChainContext {
  const chain = request.chains.get(Number(raw));
  if (!chain) throw new AuxError(404, `chain ${raw} is not served here (served: ${[...request.chains.keys()].join(', ') || 'none'})`);
  return chain;
}

/** The `tokens` query parameter, parsed (400 when missing, malformed or over the cap). */
function tokensOf(request: RequestReading, raw: string | undefined): Address[] {
  try {
    return parseTokenList(raw, request.maxTokens);
  } catch (err) {
    if (err instanceof TokenListError) throw new AuxError(400, err.message);
    throw err;
  }
}

/** A failed chain read as the error to answer: 503 while shutting down, else 500 naming the chain. */
function chainFailure(chain: BalanceChainContext, err: unknown): AuxError {
  if (err instanceof AuxError) return err;
  if (err instanceof StreamClosedError) return new AuxError(503, 'the server is shutting down; reconnect to another instance');
  const failure = new AuxError(500, `could not read balances on chain ${chain.chainId}: the chain node did not answer`);
  (failure as Error & { cause?: unknown }).cause = err;
  return failure;
}

/** The open SSE connections of one registration: their shared ping ticker (running only while any is open) and shutdown. */
class OpenStreams {
  private readonly open = new Set<SseConnection>();
  private ticker: NodeJS.Timeout | null = null;
  shuttingDown = false;

  constructor(readonly pingIntervalMs: number) {}

  get size(): number {
    return this.open.size;
  }

  add(conn: SseConnection): void {
    this.open.add(conn);
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      const data = JSON.stringify({ timestamp: new Date().toISOString() });
      for (const c of this.open) c.ping(data);
    }, this.pingIntervalMs);
    this.ticker.unref?.();
  }

  delete(conn: SseConnection): void {
    this.open.delete(conn);
    this.stopTickerIfIdle();
  }

  endAll(): void {
    this.shuttingDown = true;
    for (const conn of [...this.open]) conn.end();
    this.stopTickerIfIdle();
  }

  private stopTickerIfIdle(): void {
    if (this.open.size > 0 || !this.ticker) return;
    clearInterval(this.ticker);
    this.ticker = null;
  }
}

/** Streams of the same token list share one metadata array instead of holding a copy each. */
class SharedTokenLists {
  private readonly lists = new Map<string, TokenInfo[]>();

  share(chainId: number, list: TokenInfo[]): TokenInfo[] {
    const key = `${chainId}:${list.map((t) => `${t.address}/${t.decimals}/${t.symbol}/${t.name}`).join(',')}`;
    const existing = this.lists.get(key);
    if (existing) return existing;
    if (this.lists.size >= 10_000) this.lists.clear();
    this.lists.set(key, list);
    return list;
  }
}

/** GET …/balances: one batched read per distinct request in flight (concurrent identical requests share it). */
function registerBalancesRoute(server: HttpServer, request: RequestReading, maxAge: number): void {
  const inFlight = new Map<string, Promise<{ entries: unknown[]; omitted: Address[] }>>();
  server.get(
    '/:chainId/accounts/:userAddress/balances',
    {
      schema: {
        tags: ['auxiliary'],
        summary: 'Token balances and vault-relayer allowances of an account',
        description: `Balance and allowance to the vault relayer for each requested token, in request order, read in one batched call; token metadata is cached. The native asset is 0xEeee…EEeE (allowance = max uint256). ${NOT_A_TOKEN_NOTE} At most ${request.maxTokens} distinct tokens. Cached for ${maxAge} s (Cache-Control).`,
        params: Params,
        querystring: Query,
        response: { 200: Type.Array(BalanceEntrySchema), 400: Message, 404: Message, 500: Message },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainFor(request, req.params.chainId);
      const user = req.params.userAddress.toLowerCase() as Address;
      const tokens = tokensOf(request, req.query.tokens);
      const key = `${chain.chainId}:${user}:${tokens.join(',')}`;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = (async () => {
          const { known, omitted } = await resolveTokens(chain.reader, chain.nativeCurrency, tokens);
          const pairs = known.map((t) => ({ owner: user, token: t.address as Address }));
          const values = pairs.length > 0 ? await chain.reader.balancesAndAllowances(pairs, chain.vaultRelayer) : [];
          const byToken = new Map(values.map((v) => [v.token.toLowerCase(), v]));
          return { entries: balanceEntries(known, (t) => byToken.get(t)), omitted };
        })().finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      let result: { entries: unknown[]; omitted: Address[] };
      try {
        result = await pending;
      } catch (err) {
        throw chainFailure(chain, err);
      }
      reply.header('Cache-Control', `public, max-age=${maxAge}`);
      if (result.omitted.length > 0) {
        reply.header('X-Omitted-Tokens', result.omitted.join(','));
        reply.header('Access-Control-Expose-Headers', 'X-Omitted-Tokens');
      }
      return sendJson(reply, 200, result.entries);
    },
  );
}

/**
 * GET …/balances/sse: admits the stream (caps), resolves its tokens, watches them on the chain's BalanceStream and
 * only then opens the event stream, so that every error is still answered as `{message}`.
 */
function registerBalanceStreamRoute(
  server: HttpServer,
  request: RequestReading,
  { streams, limiter, stallTimeoutMs }: { streams: OpenStreams; limiter: ConnectionLimiter; stallTimeoutMs?: number },
): void {
  const tokenLists = new SharedTokenLists();
  const { pingIntervalMs } = streams;
  server.get(
    '/:chainId/accounts/:userAddress/balances/sse',
    {
      schema: {
        tags: ['auxiliary'],
        summary: 'Live balances and allowances of an account (Server-Sent Events)',
        description:
          `Headers: Content-Type text/event-stream, Cache-Control no-cache, Connection keep-alive, Access-Control-Allow-Origin *, X-Accel-Buffering no. ` +
          `\`event: message\` carries the full JSON array of balance entries (same shape as the REST answer) on connect and whenever a balance or allowance of one of this stream's tokens changes (checked on every new block; several streams of one user share one tracking). ` +
          `\`event: ping\` with \`{"timestamp": ISO 8601}\` every ${Math.round(pingIntervalMs / 1000)} s. ${NOT_A_TOKEN_NOTE} ` +
          `Concurrent streams are capped per IP (${limiter.caps.maxConnectionsPerIp}, else 429) and per server (${limiter.caps.maxConnections}, else 503); all errors are answered as \`{message}\` before the stream starts. ` +
          `A client that stops reading receives only the latest state once it reads again, and is disconnected after ${Math.round((stallTimeoutMs ?? 30_000) / 1000)} s without reading.`,
        params: Params,
        querystring: Query,
        response: {
          200: { description: 'An endless event stream', content: { 'text/event-stream': { schema: Type.String() } } },
          400: Message,
          404: Message,
          429: Message,
          500: Message,
          503: Message,
        },
      },
      config: { api: 'aux' },
    },
    async (req, reply) => {
      const chain = chainFor(request, req.params.chainId);
      const user = req.params.userAddress.toLowerCase() as Address;
      const tokens = tokensOf(request, req.query.tokens);
      if (streams.shuttingDown) throw new AuxError(503, 'the server is shutting down; reconnect to another instance');
      const slot = limiter.acquire(clientKeyOf(req), tokens.map((t) => `${chain.chainId}:${user}:${t.toLowerCase()}`));
      if ('refused' in slot) {
        reply.header('Retry-After', String(slot.refused.retryAfterSeconds));
        throw new AuxError(slot.refused.status, slot.refused.message);
      }

      let gone = false;
      const onGone = (): void => {
        gone = true;
      };
      reply.raw.once('close', onGone);
      let conn: SseConnection | null = null;
      let known: TokenInfo[] = [];
      let omitted: Address[] = [];
      let watch: BalanceWatch | null = null;
      const snapshot = (): string => JSON.stringify(balanceEntries(known, (t) => watch?.value(t)));
      try {
        ({ known, omitted } = await resolveTokens(chain.reader, chain.nativeCurrency, tokens));
        known = tokenLists.share(chain.chainId, known);
        if (known.length > 0 && !gone) {
          watch = await chain.stream.watch({
            user,
            tokens: known.map((t) => t.address as Address),
            onChange: () => conn?.send('message', snapshot),
            onClose: () => conn?.end(),
          });
        }
      } catch (err) {
        slot.release();
        reply.raw.off('close', onGone);
        throw chainFailure(chain, err);
      }
      reply.raw.off('close', onGone);
      if (gone || streams.shuttingDown || watch?.closed) {
        watch?.close();
        slot.release();
        if (!gone) throw new AuxError(503, 'the server is shutting down; reconnect to another instance');
        return reply.hijack();
      }

      reply.hijack();
      const connection = new SseConnection(reply.raw, {
        stallTimeoutMs,
        onClose: () => {
          watch?.close();
          slot.release();
          streams.delete(connection);
        },
      });
      conn = connection;
      streams.add(connection);
      connection.open(omitted.length > 0 ? { 'X-Omitted-Tokens': omitted.join(','), 'Access-Control-Expose-Headers': 'X-Omitted-Tokens' } : {});
      connection.send('message', snapshot);
    },
  );
}
