/**
 * JSON-RPC over HTTP for the simulator: one call per request, an abort signal and a timeout on every call, and
 * two kinds of failure kept apart — the node could not be reached or answered garbage (`RpcTransportError`),
 * or it answered with a JSON-RPC error object (`RpcCallError`, e.g. a rejected transaction).
 *
 * @example
 *   const head = await rpcCall<Hex>(url, 'eth_blockNumber', [], { timeoutMs: 5_000 });
 */

export class RpcTransportError extends Error {
  constructor(readonly method: string, message: string, options?: { cause?: unknown }) {
    super(`${method}: ${message}`, options);
    this.name = 'RpcTransportError';
  }
}

export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${rpcMessage}`);
    this.name = 'RpcCallError';
  }
}

export interface RpcCallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
}

export async function rpcCall<T>(url: string, method: string, params: unknown[], options: RpcCallOptions): Promise<T> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let body: { result?: unknown; error?: { code?: number; message?: string; data?: unknown } };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal,
    });
    if (!res.ok) {
      // drain so the connection can be reused
      await res.arrayBuffer().catch(() => undefined);
      throw new RpcTransportError(method, `HTTP ${res.status} from ${redact(url)}`);
    }
    body = (await res.json()) as typeof body;
  } catch (err) {
    if (err instanceof RpcTransportError) throw err;
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    const reason = timeout.aborted ? `no answer from ${redact(url)} within ${options.timeoutMs} ms` : `request to ${redact(url)} failed: ${describe(err)}`;
    throw new RpcTransportError(method, reason, { cause: err });
  }
  if (body === null || typeof body !== 'object') throw new RpcTransportError(method, `malformed answer from ${redact(url)}`);
  if (body.error) throw new RpcCallError(method, body.error.code, body.error.message ?? 'unknown error', body.error.data);
  if (!('result' in body)) throw new RpcTransportError(method, `answer from ${redact(url)} has neither result nor error`);
  return body.result as T;
}

/** Origin only: RPC URLs often carry an API key in the path or query. */
export function redact(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the RPC node';
  }
}

function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
