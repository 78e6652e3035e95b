// The few reads fork mode sends to FORK_URL itself (everything else reaches it only through anvil's lazy fork
// reads): its chain id, its head and the fork block's hash. Read-only by construction — this client has no other
// method — and its errors never carry the URL (it may hold an API key).
import type { Hex } from 'viem';

export class ForkUpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForkUpstreamError';
  }
}

/** `text` with every occurrence of the URL (and of its origin) replaced by FORK_URL. */
export function redactForkUrl(text: string, forkUrl: string): string {
  let out = text.split(forkUrl).join('FORK_URL');
  try {
    const u = new URL(forkUrl);
    for (const part of [u.origin + u.pathname, u.host, u.search.slice(1), u.username, u.password]) {
      if (part.length >= 4) out = out.split(part).join('FORK_URL');
    }
  } catch {
    // not a URL: the full string was replaced already
  }
  return out;
}

const READS = ['eth_chainId', 'eth_blockNumber', 'eth_getBlockByNumber'] as const;
type UpstreamRead = (typeof READS)[number];

export interface ForkUpstream {
  chainId(): Promise<number>;
  head(): Promise<bigint>;
  block(number: bigint): Promise<{ number: bigint; hash: Hex; timestamp: bigint } | null>;
}

export function forkUpstream(forkUrl: string, timeoutMs = 15_000): ForkUpstream {
  const read = async <T>(method: UpstreamRead, params: unknown[]): Promise<T> => {
    let body: { result?: T; error?: { message?: string } };
    try {
      const res = await fetch(forkUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw new ForkUpstreamError(`fork: the upstream (FORK_URL) did not answer ${method}: ${redactForkUrl((err as Error).message, forkUrl)}`);
    }
    if (body.error) throw new ForkUpstreamError(`fork: the upstream (FORK_URL) refused ${method}: ${redactForkUrl(String(body.error.message), forkUrl)}`);
    return body.result as T;
  };
  return {
    chainId: async () => Number(BigInt(await read<Hex>('eth_chainId', []))),
    head: async () => BigInt(await read<Hex>('eth_blockNumber', [])),
    block: async (number) => {
      const b = await read<{ number: Hex; hash: Hex; timestamp: Hex } | null>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
      return b ? { number: BigInt(b.number), hash: b.hash, timestamp: BigInt(b.timestamp) } : null;
    },
  };
}
