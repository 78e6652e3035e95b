/**
 * Exponential backoff with full jitter: the n-th retry waits a uniformly random time in [0, min(cap, base·2^(n-1))].
 * With base 1 s and cap 60 s a receiver that comes back gets its backlog within about a minute.
 *
 * @example fullJitterDelay(3, { baseMs: 1000, capMs: 60_000 }, () => 0.5) === 2000
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export function fullJitterDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}
