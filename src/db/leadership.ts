/**
 * Singleton work across replicas (the indexer, the auction and the driver must run once per chain): the
 * replica holding a PostgreSQL session-level advisory lock is the leader. The lock lives as long as that one
 * connection: if the leader dies or loses its connection, the lock is released and another replica takes
 * over within one retry interval; a leader that stops answering without closing it (frozen, its host gone) is
 * disconnected by the server after `idleTimeoutMs` of silence. With PGlite (one process owns the database) the caller is always leader.
 *
 * @example
 *   const stop = runAsLeader({ url, name: 'loops:31337', logger, signal }, async (leaderSignal) => { ... });
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import pg from 'pg';

export interface LeadershipLogger {
  info(msg: string): void;
  warn(obj: object, msg?: string): void;
}

export interface LeadershipOptions {
  /** PostgreSQL URL, or null for an embedded (single-process) database */
  url: string | null;
  /** what is being led; one lock per name */
  name: string;
  logger: LeadershipLogger;
  signal: AbortSignal;
  retryMs?: number;
  /**
   * A leader whose session stays silent this long is disconnected by the server, which frees the lock (default
   * max(3 × retryMs, 15 s); the leader pings every retryMs). Without it a leader that stops answering without closing
   * its connection (a frozen process, a host gone) would keep the lock until the server's TCP keepalive notices.
   */
  idleTimeoutMs?: number;
}

/** 64-bit advisory lock key derived from the name. */
export function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Runs `work` while this replica leads `name`; `work` gets a signal that aborts when leadership is lost
 * or the outer signal aborts. Resolves when the outer signal aborts and `work` has returned.
 */
export async function runAsLeader(options: LeadershipOptions, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const { url, name, logger, signal } = options;
  if (url === null) {
    await work(signal);
    return;
  }
  const retryMs = options.retryMs ?? 5_000;
  const idleTimeoutMs = Math.round(options.idleTimeoutMs ?? Math.max(3 * retryMs, 15_000));
  const key = lockKey(name).toString();
  while (!signal.aborted) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    const lost = new AbortController();
    setMaxListeners(100, lost.signal); // the leader's loops of a chain all wait on it
    const onAbort = () => lost.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    client.on('error', (err) => {
      logger.warn({ err: err.message }, `${name}: leadership connection failed`);
      lost.abort();
    });
    try {
      await client.connect();
      // PostgreSQL 14+: the server ends this session (and so the lock) when the pings stop; older servers ignore it
      await client.query(`set idle_session_timeout = ${idleTimeoutMs}`).catch(() => {});
      const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1::bigint) as ok', [key]);
      if (rows[0]?.ok) {
        logger.info(`${name}: this replica leads`);
        // a silent connection loss is noticed by a periodic ping
        const ping = setInterval(() => client.query('select 1').catch(() => lost.abort()), retryMs);
        try {
          await work(lost.signal);
        } finally {
          clearInterval(ping);
        }
        if (!signal.aborted) logger.warn({}, `${name}: leadership lost, standing by`);
      }
    } catch (err) {
      if (!signal.aborted) logger.warn({ err: (err as Error).message }, `${name}: cannot reach the database for leadership`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      await client.end().catch(() => {});
    }
    if (signal.aborted) break;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, retryMs);
      signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }
}
