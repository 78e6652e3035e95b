/**
 * Caps on concurrent balance streams in this process (spec §8: "a concurrent-connection limit applies"): per
 * client IP, refused with 429 (the client should close other streams), and in total, refused with 503 (the
 * replica is full; retry later or elsewhere). A slot is taken before the stream starts and given back exactly
 * once when it ends.
 *
 * @example
 *   const slot = limiter.acquire(request.ip);
 *   if ('refused' in slot) throw new AuxError(slot.refused.status, slot.refused.message);
 *   ... slot.release();
 */

export interface ConnectionCaps {
  /** streams per process (default 10 000) */
  maxConnections: number;
  /** streams per client IP (default 32) */
  maxConnectionsPerIp: number;
  /** distinct (chain, user, token) pairs watched by one client's streams together (default 1000) */
  maxPairsPerIp: number;
}

export const DEFAULT_CONNECTION_CAPS: ConnectionCaps = { maxConnections: 10_000, maxConnectionsPerIp: 32, maxPairsPerIp: 1000 };

export interface Refusal {
  status: 429 | 503;
  message: string;
  retryAfterSeconds: number;
}

export type Acquired = { release(): void } | { refused: Refusal };

export class ConnectionLimiter {
  private total = 0;
  private readonly perIp = new Map<string, number>();
  /** client → watched pair → how many of its streams watch it */
  private readonly pairsOf = new Map<string, Map<string, number>>();

  constructor(readonly caps: ConnectionCaps) {}

  get connections(): number {
    return this.total;
  }

  connectionsOf(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  acquire(ip: string, pairs: readonly string[] = []): Acquired {
    const mine = this.perIp.get(ip) ?? 0;
    const watched = this.pairsOf.get(ip) ?? new Map<string, number>();
    const added = new Set(pairs.filter((p) => !watched.has(p))).size;
    if (watched.size + added > this.caps.maxPairsPerIp) {
      return {
        refused: {
          status: 429,
          message: `too many balances watched by this client: at most ${this.caps.maxPairsPerIp} distinct (user, token) pairs across its streams; close a stream or watch fewer tokens`,
          retryAfterSeconds: 5,
        },
      };
    }
    if (mine >= this.caps.maxConnectionsPerIp) {
      return {
        refused: {
          status: 429,
          message: `too many balance streams from this client: at most ${this.caps.maxConnectionsPerIp} concurrent streams per IP address; close one first`,
          retryAfterSeconds: 5,
        },
      };
    }
    if (this.total >= this.caps.maxConnections) {
      return {
        refused: {
          status: 503,
          message: `balance streams are at capacity (${this.caps.maxConnections} concurrent streams); retry later`,
          retryAfterSeconds: 10,
        },
      };
    }
    this.total++;
    this.perIp.set(ip, mine + 1);
    const unique = [...new Set(pairs)];
    for (const p of unique) watched.set(p, (watched.get(p) ?? 0) + 1);
    if (watched.size > 0) this.pairsOf.set(ip, watched);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.perIp.get(ip) ?? 1) - 1;
        if (left <= 0) this.perIp.delete(ip);
        else this.perIp.set(ip, left);
        for (const p of unique) {
          const n = (watched.get(p) ?? 1) - 1;
          if (n <= 0) watched.delete(p);
          else watched.set(p, n);
        }
        if (watched.size === 0) this.pairsOf.delete(ip);
      },
    };
  }
}
