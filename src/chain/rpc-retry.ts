/**
 * Retries for JSON-RPC transports with exponential backoff and full jitter, so that many requests failing at
 * once (a node restart, a rate limit) do not come back in lock-step. viem's own `retryDelay` is a plain
 * `2^n × delay` without jitter, so its retries are switched off (`retryCount: 0`) and this wrapper retries instead.
 *
 * @example
 *   const transport = withJitteredRetry(http(url, { retryCount: 0 }), { retryCount: 4, baseDelayMs: 200 });
 */
import type { Transport } from 'viem';

export interface RetryPolicy {
  /** retries after the first attempt */
  retryCount: number;
  /** the first retry waits up to this long; each further one up to twice as long as the previous */
  baseDelayMs: number;
  /** cap of a single wait */
  maxDelayMs: number;
  /** source of randomness in [0, 1) (tests pin it) */
  random?: () => number;
  /** no retry starts (and no backoff runs past) this long after the call began: a stalled node costs a call
   *  one timeout, not one per attempt (default: no budget) */
  budgetMs?: number;
}

/** "Full jitter": a uniform wait in [0, min(max, base × 2^attempt)]; attempt counts from 0. */
export function backoffDelay(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 30));
  return Math.floor((policy.random ?? Math.random)() * ceiling);
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  status?: unknown;
  message?: unknown;
  details?: unknown;
  cause?: unknown;
}

/** The chain of causes of an error (viem wraps errors several levels deep). */
function causes(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = error;
  while (current && typeof current === 'object' && out.length < 8) {
    out.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return out;
}

function text(error: unknown): string {
  return causes(error)
    .map((e) => `${String(e.message ?? '')} ${String(e.details ?? '')}`)
    .join(' ');
}

/** Messages of `eth_getLogs` refusals that mean "ask for less", not "try again later". */
const LOG_LIMIT_PATTERN =
  /more than \d+ (results|logs)|too many (results|logs|blocks)|query returned more than|block range|range (is )?too (large|wide)|exceed(s|ed)? (max|maximum)|response size|limit exceeded|query timeout|log response size/i;

/**
 * True when an `eth_getLogs` error asks the caller to query a smaller block range: a node's refusal, or a
 * response larger than the transport accepts (viem's `ResponseBodyTooLargeError`, 10 MB by default).
 */
export function isLogRangeTooLarge(error: unknown): boolean {
  if (causes(error).some((e) => e.name === 'ResponseBodyTooLargeError')) return true;
  return LOG_LIMIT_PATTERN.test(text(error));
}

/**
 * True for errors worth retrying: network failures, timeouts, HTTP 408/429/5xx, JSON-RPC "limit exceeded",
 * "internal error" and known transient node messages. Reverts, invalid params and unknown methods are final.
 */
export function isTransientRpcError(error: unknown): boolean {
  const chain = causes(error);
  if (chain.some((e) => e.name === 'AbortError')) return false;
  for (const e of chain) {
    if (e.name === 'TimeoutError' || e.name === 'WebSocketRequestError' || e.name === 'SocketClosedError') return true;
    if (e.name === 'HttpRequestError') {
      const status = typeof e.status === 'number' ? e.status : undefined;
      if (status === undefined) return true; // connection refused, reset, DNS
      return status === 408 || status === 429 || status >= 500;
    }
  }
  for (const e of chain) {
    if (typeof e.code !== 'number') continue;
    const code = e.code;
    if (code === -1 || code === -32005 || code === -32603 || code === 429 || code === -32007) return true;
    if (code === -32000) return /header not found|unknown block|timeout|timed out|busy|try again|rate/i.test(text(error));
    return false;
  }
  return false;
}

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wraps a viem transport; the inner transport should be created with `retryCount: 0`. */
export function withJitteredRetry<T extends Transport>(inner: T, policy: RetryPolicy): T {
  const wrapped = ((params: Parameters<T>[0]) => {
    const base = inner({ ...params, retryCount: 0 });
    const request = async (args: { method: string; params?: unknown }, options?: { signal?: AbortSignal; retryCount?: number }) => {
      const retries = options?.retryCount ?? policy.retryCount;
      const deadline = policy.budgetMs === undefined ? Infinity : Date.now() + policy.budgetMs;
      for (let attempt = 0; ; attempt++) {
        try {
          return await base.request(args as never, { ...options, retryCount: 0 } as never);
        } catch (error) {
          const final =
            attempt >= retries ||
            options?.signal?.aborted ||
            !isTransientRpcError(error) ||
            (args.method === 'eth_getLogs' && isLogRangeTooLarge(error));
          const delay = backoffDelay(attempt, policy);
          if (final || Date.now() + delay >= deadline) throw error;
          await sleep(delay, options?.signal);
        }
      }
    };
    return { ...base, config: { ...base.config, retryCount: 0 }, request };
  }) as unknown as T;
  return wrapped;
}
