/**
 * JSON-RPC over HTTP for the simulator: one call per request (`rpcCall`) or several in one HTTP request
 * (`rpcBatch`), an abort signal and a timeout on every request, and two kinds of failure kept apart — the node
 * could not be reached or answered garbage (`RpcTransportError`), or it answered with a JSON-RPC error object
 * (`RpcCallError`, e.g. a rejected transaction).
 *
 * The calls of a batch may run concurrently on the node (anvil does): batch only calls whose order does not
 * matter — reads of a state nothing else changes meanwhile, or changes independent of each other.
 *
 * @example
 *   const head = await rpcCall<Hex>(url, 'eth_blockNumber', [], { timeoutMs: 5_000 });
 *   const [block, snapshot] = await rpcBatch(url, [['eth_getBlockByNumber', ['latest', false]], ['evm_snapshot', []]], { timeoutMs: 5_000 });
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

interface RpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string; data?: unknown };
}

export async function rpcCall<T>(url: string, method: string, params: unknown[], options: RpcCallOptions): Promise<T> {
  const body = await post(url, method, { jsonrpc: '2.0', id: 1, method, params }, options);
  return resultOf<T>(url, method, body);
}

/** One call of a batch: the method and its params. */
export type RpcBatchCall = readonly [method: string, params: unknown[]];

/**
 * Several calls in one HTTP request. Each entry of the answer is the call's result or, when the node answered
 * that call with an error object, its `RpcCallError` (returned, not thrown: the other calls may have succeeded);
 * a transport failure, or an answer that does not account for every call, rejects the whole batch.
 */
export async function rpcBatch(url: string, calls: readonly RpcBatchCall[], options: RpcCallOptions): Promise<Array<unknown | RpcCallError>> {
  const label = calls.map(([method]) => method).join(',');
  const body = await post(url, label, calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params })), options);
  if (!Array.isArray(body)) {
    // a node that refuses the batch as a whole answers with a single error object
    if (body !== null && typeof body === 'object' && (body as RpcAnswer).error) resultOf(url, label, body);
    throw new RpcTransportError(label, `malformed answer to a batch from ${redact(url)}`);
  }
  // answers may come in any order: matched by id
  const byId = new Map<unknown, unknown>(body.map((answer) => [answer !== null && typeof answer === 'object' ? (answer as RpcAnswer).id : undefined, answer]));
  return calls.map(([method], id) => {
    if (!byId.has(id)) throw new RpcTransportError(method, `the answer to a batch from ${redact(url)} lacks call ${id}`);
    try {
      return resultOf<unknown>(url, method, byId.get(id));
    } catch (err) {
      if (err instanceof RpcCallError) return err;
      throw err;
    }
  });
}

async function post(url: string, label: string, payload: unknown, options: RpcCallOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal,
    });
    if (!res.ok) {
      // drain so the connection can be reused
      await res.arrayBuffer().catch(() => undefined);
      throw new RpcTransportError(label, `HTTP ${res.status} from ${redact(url)}`);
    }
    return await res.json();
  } catch (err) {
    if (err instanceof RpcTransportError) throw err;
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    const reason = timeout.aborted ? `no answer from ${redact(url)} within ${options.timeoutMs} ms` : `request to ${redact(url)} failed: ${describe(err)}`;
    throw new RpcTransportError(label, reason, { cause: err });
  }
}

function resultOf<T>(url: string, method: string, answer: unknown): T {
  if (answer === null || typeof answer !== 'object') throw new RpcTransportError(method, `malformed answer from ${redact(url)}`);
  const body = answer as RpcAnswer;
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
