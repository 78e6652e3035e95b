// A minimal JSON-RPC client for talking to the devnet's anvil directly: single calls and JSON-RPC batches.
// viem covers typed contract reads; this exists for the anvil_/evm_ methods and for large batches during
// set-up and history replay, where one HTTP round trip per block matters.
//
// Note: anvil answers the requests of one batch concurrently, not in order — never put requests that depend on
// each other (e.g. eth_sendTransaction then evm_mine) into the same batch.

export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message}`);
    this.name = 'RpcError';
  }
}

export interface RpcCall {
  method: string;
  params?: unknown[];
}

export interface DevnetRpc {
  readonly url: string;
  request<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Sends the calls as one JSON-RPC batch; rejects with the first error (in call order). */
  batch<T = unknown>(calls: RpcCall[]): Promise<T[]>;
}

interface RpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export function createDevnetRpc(url: string, options: { timeoutMs?: number } = {}): DevnetRpc {
  const timeoutMs = options.timeoutMs ?? 60_000;
  let nextId = 1;

  async function post(body: unknown, label: string): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new RpcError(label, undefined, `request to ${url} failed: ${(err as Error).message}`);
    }
    if (!res.ok) throw new RpcError(label, res.status, `HTTP ${res.status} from ${url}`);
    return res.json();
  }

  function unwrap(method: string, r: RpcResponse | undefined): unknown {
    if (!r) throw new RpcError(method, undefined, 'no response in batch');
    if (r.error) throw new RpcError(method, r.error.code, r.error.message, r.error.data);
    return r.result;
  }

  return {
    url,
    async request<T>(method: string, params: unknown[] = []): Promise<T> {
      const id = nextId++;
      const r = (await post({ jsonrpc: '2.0', id, method, params }, method)) as RpcResponse;
      return unwrap(method, r) as T;
    },
    async batch<T>(calls: RpcCall[]): Promise<T[]> {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params ?? [] }));
      const out = await post(body, `batch(${calls[0]!.method}…)`);
      if (!Array.isArray(out)) {
        const single = out as RpcResponse;
        throw new RpcError('batch', single.error?.code, single.error?.message ?? 'batch answered with a non-array');
      }
      const byId = new Map<number, RpcResponse>();
      for (const r of out as RpcResponse[]) byId.set(r.id, r);
      return calls.map((c, i) => unwrap(c.method, byId.get(first + i)) as T);
    },
  };
}
