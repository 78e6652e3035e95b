/**
 * Per-client simulation quotas, on top of the simulator's global pool: at most `concurrent` runs of one client
 * at a time and `perMinute` started in any sliding minute (clients keyed by `clientKey`, IPv6 by /64). Kept in
 * this process: with several replicas behind a balancer each replica applies them on its own.
 * A bundle's total gas is bounded too (`applyGasBudget`): explicit limits must fit the budget, and transactions
 * without one share what is left (each at most the simulator's per-transaction cap).
 */
import { BundleInputError } from './schemas.js';
import type { BundleTransaction } from './types.js';

export interface ClientQuotaLimits {
  concurrent: number;
  perMinute: number;
}

export const DEFAULT_CLIENT_QUOTA: ClientQuotaLimits = { concurrent: 2, perMinute: 30 };

export type QuotaSlot = { release(): void } | { refused: string };

export class ClientQuota {
  private readonly running = new Map<string, number>();
  private readonly started = new Map<string, number[]>();

  constructor(private readonly limits: ClientQuotaLimits, private readonly nowMs: () => number = Date.now) {}

  acquire(client: string): QuotaSlot {
    const now = this.nowMs();
    const recent = (this.started.get(client) ?? []).filter((t) => now - t < 60_000);
    const running = this.running.get(client) ?? 0;
    if (running >= this.limits.concurrent) return { refused: `at most ${this.limits.concurrent} simulations of one client at a time; wait for one to finish` };
    if (recent.length >= this.limits.perMinute) return { refused: `at most ${this.limits.perMinute} simulations of one client per minute` };
    recent.push(now);
    this.started.set(client, recent);
    this.running.set(client, running + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.running.get(client) ?? 1) - 1;
        if (left <= 0) this.running.delete(client);
        else this.running.set(client, left);
        this.forgetIdle(this.nowMs());
      },
    };
  }

  /** drops clients with nothing running and no start in the last minute (the maps stay bounded) */
  private forgetIdle(now: number): void {
    for (const [client, times] of this.started) {
      if (!this.running.has(client) && times.every((t) => now - t >= 60_000)) this.started.delete(client);
    }
  }
}

/** the simulator's per-transaction cap (EIP-7825), also its default limit */
const PER_TRANSACTION_CAP = 2 ** 24;

/** Bounds a bundle's total gas: throws BundleInputError when explicit limits exceed it, else gives every transaction a limit. */
export function applyGasBudget(transactions: BundleTransaction[], budget: number): BundleTransaction[] {
  const explicit = transactions.reduce((sum, tx) => sum + (tx.gas ?? 0), 0);
  if (explicit > budget) throw new BundleInputError(`the bundle asks for ${explicit} gas in total; at most ${budget} per bundle`);
  const open = transactions.filter((tx) => tx.gas === null).length;
  if (open === 0) return transactions;
  const share = Math.min(PER_TRANSACTION_CAP, Math.floor((budget - explicit) / open));
  if (share < 21_000) throw new BundleInputError(`the bundle's gas budget (${budget}) leaves too little for the transactions without a gas limit`);
  return transactions.map((tx) => (tx.gas === null ? { ...tx, gas: share } : tx));
}
