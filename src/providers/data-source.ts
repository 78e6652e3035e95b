/**
 * The one interface every data provider implements — the first-party source (chain, indexed database) and each
 * external adapter (Coingecko, holder APIs, an order book, analytics) alike — so they can be composed with
 * `fallback([...])` and `cached(...)`.
 *
 * The contract of `lookup`:
 * - resolves to a value: the source knows the answer;
 * - resolves to `null`: the source answered and has no data for this query — a definitive "don't know" that
 *   may be cached (for `nullTtl`);
 * - rejects: the source could not answer now (timeout, HTTP 5xx or 429, network error, bad credentials,
 *   malformed body, RPC outage). A rejection is never cached and never stops a fallback chain.
 *
 * @example
 *   const prices: DataSource<UsdPriceQuery, number> = fallback([cached(firstParty, 60_000, 60_000), cached(coingecko, 120_000, 1_800_000)]);
 *   const price = await prices.lookup({ chainId: 1, token });   // number | null, or throws SourcesUnavailableError
 */
export interface DataSource<Q, V> {
  /** short name used in logs and diagnostics (e.g. "coingecko") */
  readonly name: string;
  lookup(query: Q): Promise<V | null>;
}

export type ProviderFailure = 'timeout' | 'network' | 'status' | 'malformed' | 'unavailable';

/** A provider could not answer now. Messages never contain credentials or full URLs (keys travel in queries). */
export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    readonly reason: ProviderFailure,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${provider}: ${message}`, options);
    this.name = 'ProviderError';
  }
}

/** Every source of a fallback chain either had no data or failed, and at least one failed: retry later. */
export class SourcesUnavailableError extends Error {
  constructor(readonly failures: ReadonlyArray<{ source: string; error: unknown }>) {
    super(`no source could answer (${failures.map((f) => describeFailure(f.source, f.error)).join('; ')})`);
    this.name = 'SourcesUnavailableError';
  }
}

function describeFailure(source: string, error: unknown): string {
  if (error instanceof ProviderError) return error.message;
  if (error instanceof SourcesUnavailableError) return `${source}: ${error.message}`;
  const message = error instanceof Error ? error.message : String(error);
  // RPC errors (viem) carry multi-line details: keep the first line
  return `${source}: ${message.split('\n')[0]!.slice(0, 200)}`;
}
