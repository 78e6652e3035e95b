/**
 * One HTTP call to an external provider with a hard timeout covering the whole exchange (connect, headers and
 * body). Transport problems reject with `ProviderError` ('timeout' | 'network'); every HTTP status resolves, so
 * each adapter decides what a 404 or a 400 means for its provider. Error messages name the provider and the
 * path only — never the query string or headers, which carry API keys.
 *
 * @example
 *   const res = await providerRequest('coingecko', `${base}/simple/price?ids=ethereum&vs_currencies=usd`, { headers }, { timeoutMs: 5000 });
 *   if (res.status === 404) return null;
 *   expectOk('coingecko', res);
 */
import { ProviderError } from './data-source.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ProviderHttpOptions {
  timeoutMs: number;
  /** default: the global fetch */
  fetch?: FetchLike;
}

export interface ProviderResponse {
  status: number;
  /** parsed JSON, or undefined when the body is empty or not JSON */
  body: unknown;
}

export interface ProviderRequestInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** "GET /simple/token_price/ethereum" — what an error message may show of a URL. */
function describe(method: string, url: string): string {
  try {
    return `${method} ${new URL(url).pathname}`;
  } catch {
    return method;
  }
}

export async function providerRequest(provider: string, url: string, init: ProviderRequestInit, options: ProviderHttpOptions): Promise<ProviderResponse> {
  const method = init.method ?? 'GET';
  const signal = AbortSignal.timeout(options.timeoutMs);
  const doFetch = options.fetch ?? fetch;
  try {
    const response = await doFetch(url, {
      method,
      headers: { accept: 'application/json', ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body,
      signal,
    });
    const text = await response.text();
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    return { status: response.status, body };
  } catch (error) {
    if (signal.aborted) {
      throw new ProviderError(provider, 'timeout', `${describe(method, url)} timed out after ${options.timeoutMs} ms`, undefined, { cause: error });
    }
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    throw new ProviderError(provider, 'network', `${describe(method, url)} failed (${reason})`, undefined, { cause: error });
  }
}

/** Rejects unless the status is 2xx and the body is JSON. */
export function expectOk(provider: string, response: ProviderResponse, what = 'request'): void {
  if (response.status < 200 || response.status > 299) {
    throw new ProviderError(provider, 'status', `${what} answered HTTP ${response.status}`, response.status);
  }
  if (response.body === undefined) throw new ProviderError(provider, 'malformed', `${what} answered a body that is not JSON`, response.status);
}

export function malformed(provider: string, what: string): ProviderError {
  return new ProviderError(provider, 'malformed', what);
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A non-negative integer given as a decimal string (or a safe integer number), as bigint; null otherwise. */
export function parseAtoms(v: unknown): bigint | null {
  if (typeof v === 'string' && /^[0-9]{1,78}$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return null;
}

/** A lowercase 0x address, or null. */
export function parseAddress(v: unknown): `0x${string}` | null {
  if (typeof v !== 'string') return null;
  const m = /^(?:0x|\\x)([0-9a-fA-F]{40})$/.exec(v);
  return m ? (`0x${m[1]!.toLowerCase()}` as `0x${string}`) : null;
}
