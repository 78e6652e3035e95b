/**
 * One outbound HTTP(S) request to a user-named host, for channels whose target a subscriber chooses. The host is
 * resolved once, checked (unless private targets are allowed), and the connection is pinned to exactly the
 * checked addresses, so a name that flips to a private address between check and connect (DNS rebinding) is
 * refused. Redirects are never followed; one deadline covers connect, headers and body. Never throws for
 * transport problems: the outcome says what happened, without the URL's path or query (they may carry tokens).
 *
 * @example
 *   const r = await guardedRequest(new URL('https://hooks.example/in'), { method: 'POST', headers, body }, { allowPrivate: false, timeoutMs: 10_000 });
 *   if (r.kind === 'response' && r.status === 204) ...
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { hostOf, resolveTargetHost, TargetAddressError, type ResolveHost, type ResolvedAddress } from './target-address.js';

export interface GuardedRequestInit {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface GuardedRequestOptions {
  allowPrivate: boolean;
  /** the whole request: resolve, connect, headers and body */
  timeoutMs: number;
  /** the TCP connection must be up within this (default: timeoutMs) */
  connectTimeoutMs?: number;
  /** once the request is sent, the response headers must start within this (default: timeoutMs) */
  firstByteTimeoutMs?: number;
  /** default: the system resolver */
  resolve?: ResolveHost;
  /** at most this many response body bytes are read (the rest is discarded); default 64 KiB */
  maxResponseBytes?: number;
  /**
   * keep-alive agents to reuse connections (default: a fresh connection per request). Safe with the address
   * check: a pooled socket was opened to an address that was checked when it was opened.
   */
  agents?: { http: HttpAgent; https: HttpsAgent };
}

export type GuardedOutcome =
  | { kind: 'response'; status: number; headers: IncomingMessage['headers']; body: string }
  | { kind: 'refused'; error: TargetAddressError }
  | { kind: 'timeout'; error: string }
  | { kind: 'network'; error: string };

/** A lookup that answers only the addresses checked beforehand (the connection cannot re-resolve elsewhere). */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const usable = wanted.length > 0 ? wanted : addresses;
    if (options.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, usable);
    else callback(null, usable[0]!.address, usable[0]!.family);
  };
}

function readBody(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
      size += chunk.length;
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

export async function guardedRequest(url: URL, init: GuardedRequestInit, options: GuardedRequestOptions): Promise<GuardedOutcome> {
  const host = hostOf(url);
  // one deadline for everything: a plain timer (an AbortSignal per request cost more than signing it)
  let expired = false;
  let onDeadline: () => void = () => {};
  const timedOut = new Promise<'timeout'>((resolve) => {
    onDeadline = () => resolve('timeout');
  });
  const deadline = setTimeout(() => {
    expired = true;
    onDeadline();
  }, options.timeoutMs);
  try {
    let addresses: ResolvedAddress[];
    try {
      const resolved = await Promise.race([resolveTargetHost(host, { allowPrivate: options.allowPrivate, resolve: options.resolve }), timedOut]);
      if (resolved === 'timeout') return { kind: 'timeout', error: `${host} did not resolve within ${options.timeoutMs} ms` };
      addresses = resolved;
    } catch (error) {
      if (error instanceof TargetAddressError) return { kind: 'refused', error };
      throw error;
    }
    if (expired) return { kind: 'timeout', error: `${host} did not resolve within ${options.timeoutMs} ms` };
    return await send(url, init, options, host, addresses, (cut) => {
      onDeadline = cut;
    }, () => expired);
  } finally {
    clearTimeout(deadline);
  }
}

/** The request itself, to pinned addresses; `atDeadline` registers what cuts it when the deadline passes. */
async function send(
  url: URL,
  init: GuardedRequestInit,
  options: GuardedRequestOptions,
  host: string,
  addresses: ResolvedAddress[],
  atDeadline: (cut: () => void) => void,
  expired: () => boolean,
): Promise<GuardedOutcome> {
  const requestOptions: RequestOptions = {
    method: init.method,
    hostname: host,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: { ...init.headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) },
    lookup: pinnedLookup(addresses),
    agent: options.agents ? (url.protocol === 'https:' ? options.agents.https : options.agents.http) : false,
  };
  const start = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let phase: { name: string; ms: number } | null = null;
  let phaseTimer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<GuardedOutcome>((resolve, reject) => {
      const req = start(requestOptions, (res) => {
        clearTimeout(phaseTimer);
        atDeadline(() => res.destroy(new Error('deadline')));
        readBody(res, options.maxResponseBytes ?? 65_536).then(
          (body) => resolve({ kind: 'response', status: res.statusCode ?? 0, headers: res.headers, body }),
          reject,
        );
      });
      atDeadline(() => req.destroy(new Error('deadline')));
      // the short phases: a host that does not connect, or connects and does not answer, frees its slot early
      const startPhase = (name: string, ms: number | undefined) => {
        clearTimeout(phaseTimer);
        if (ms === undefined || ms >= options.timeoutMs) return;
        phase = null;
        phaseTimer = setTimeout(() => {
          phase = { name, ms };
          req.destroy(new Error(`${name} timeout`));
        }, ms);
      };
      const connected = () => startPhase('first byte', options.firstByteTimeoutMs);
      req.on('socket', (socket) => {
        if (socket.connecting) {
          startPhase('connect', options.connectTimeoutMs);
          socket.once('connect', connected);
        } else connected(); // a pooled connection
      });
      req.on('error', reject);
      req.end(init.body);
    });
  } catch (error) {
    if (expired()) return { kind: 'timeout', error: `${host} did not answer within ${options.timeoutMs} ms` };
    const timedOutPhase = phase as { name: string; ms: number } | null;
    if (timedOutPhase) return { kind: 'timeout', error: `${host} did not ${timedOutPhase.name === 'connect' ? 'accept a connection' : 'start answering'} within ${timedOutPhase.ms} ms` };
    const code = (error as NodeJS.ErrnoException).code;
    return { kind: 'network', error: `${host}: ${code ?? (error as Error).message}` };
  } finally {
    clearTimeout(phaseTimer);
  }
}

/**
 * Milliseconds from an HTTP Retry-After header (delay seconds or an HTTP date), or undefined when absent or
 * unreadable. Capped at one day so a hostile receiver cannot park a delivery forever.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, 86_400_000);
}
