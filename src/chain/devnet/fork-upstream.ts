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

/**
 * `text` with the URL and every part of it that may be a secret replaced by FORK_URL: the URL itself, its host,
 * user and password, and each path segment and query value of 6 characters or more (API keys sit there).
 */
export function redactForkUrl(text: string, forkUrl: string): string {
  const parts = [forkUrl];
  try {
    const u = new URL(forkUrl);
    parts.push(u.origin + u.pathname, u.host, u.hostname, u.username, u.password, u.search.slice(1));
    parts.push(...u.pathname.split('/').map(decodeURIComponent), ...[...u.searchParams.values()]);
  } catch {
    // not a URL: only the full string is replaced
  }
  let out = text;
  for (const part of [...new Set(parts)].filter((p) => p.length >= 6).sort((a, b) => b.length - a.length)) out = out.split(part).join('FORK_URL');
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
