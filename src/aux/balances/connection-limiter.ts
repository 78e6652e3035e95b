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
}

export const DEFAULT_CONNECTION_CAPS: ConnectionCaps = { maxConnections: 10_000, maxConnectionsPerIp: 32 };

export interface Refusal {
  status: 429 | 503;
  message: string;
  retryAfterSeconds: number;
}

export type Acquired = { release(): void } | { refused: Refusal };

export class ConnectionLimiter {
  private total = 0;
  private readonly perIp = new Map<string, number>();

  constructor(readonly caps: ConnectionCaps) {}

  get connections(): number {
    return this.total;
  }

  connectionsOf(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  acquire(ip: string): Acquired {
    const mine = this.perIp.get(ip) ?? 0;
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
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.perIp.get(ip) ?? 1) - 1;
        if (left <= 0) this.perIp.delete(ip);
        else this.perIp.set(ip, left);
      },
    };
  }
}
