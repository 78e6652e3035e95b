/**
 * Singleton work across replicas (the indexer, the auction and the driver must run once per chain): the
 * replica holding a PostgreSQL session-level advisory lock is the leader. The lock lives as long as that one
 * connection: if the leader dies or loses its connection, the lock is released and another replica takes
 * over within one retry interval; a leader that stops answering without closing it (frozen, its host gone) is
 * disconnected by the server after `idleTimeoutMs` of silence. With PGlite (one process owns the database) the caller is always leader.
 *
 * A silently dropped connection (a NAT or firewall forgetting it, a peer gone without a FIN) is noticed on this
 * side too: every ping must answer within `pingTimeoutMs` (shorter than the server's idle timeout), the socket has
 * TCP keepalive on, and every query on the connection has a client-side timeout. A leader that misses one loses its
 * leadership at once (its work's signal aborts), well before the server frees the lock for another replica.
 *
 * Fence: between that moment and the work noticing the abort, the old leader could still act. So each leader, once
 * it holds the lock, takes the next **epoch** of `name` (table `leadership_epochs`) and hands it to its work as the
 * lease; whatever must never be done by two leaders (recording a settlement transaction before broadcasting it)
 * checks in its own transaction that the epoch is still current (`leaseIsCurrent`), locking the row so a new
 * leader's epoch cannot be taken in between.
 *
 * @example
 *   const stop = runAsLeader({ url, name: 'loops:31337', logger, signal }, async (leaderSignal, lease) => { ... });
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { sql, type Kysely } from 'kysely';
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
  /** how long a ping may take before leadership counts as lost (default min(retryMs, idleTimeoutMs / 3)) */
  pingTimeoutMs?: number;
}

/** What a leader holds: the name it leads and its epoch (null with an embedded database: nothing to fence). */
export interface LeadershipLease {
  name: string;
  epoch: bigint | null;
}

/** Thrown (or reported) when a leader's lease was superseded by a newer leader's. */
export class LeaseLostError extends Error {
  constructor(lease: LeadershipLease) {
    super(`${lease.name}: leadership epoch ${String(lease.epoch)} is no longer current`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Inside a transaction: true when `lease` is still the current epoch of its name, and the epoch row stays locked
 * (shared) until the transaction ends, so no new leader takes over before what it guards is committed. A lease
 * without an epoch (embedded database) is always current.
 */
export async function leaseIsCurrent(trx: Kysely<any>, lease: LeadershipLease | null | undefined): Promise<boolean> {
  if (!lease || lease.epoch === null) return true;
  // should this session go silent while it holds the row, the server ends it: a new leader never waits for it long
  await sql`set local idle_in_transaction_session_timeout = 5000`.execute(trx);
  const row = await sql<{ epoch: string }>`select epoch::text as epoch from leadership_epochs where name = ${lease.name} for share`.execute(trx);
  return row.rows[0] !== undefined && BigInt(row.rows[0].epoch) === lease.epoch;
}

/** The next epoch of `name` (1 for the first leader), taken by a replica that just acquired its lock. */
async function takeEpoch(client: pg.Client, name: string): Promise<bigint> {
  const { rows } = await client.query<{ epoch: string }>(
    `insert into leadership_epochs (name, epoch) values ($1, 1)
     on conflict (name) do update set epoch = leadership_epochs.epoch + 1, updated_at = now()
     returning epoch::text as epoch`,
    [name],
  );
  return BigInt(rows[0]!.epoch);
}

/** `promise`, or a rejection after `ms` (the timer does not keep the process alive). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** 64-bit advisory lock key derived from the name. */
export function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Runs `work` while this replica leads `name`; `work` gets a signal that aborts when leadership is lost
 * or the outer signal aborts. Resolves when the outer signal aborts and `work` has returned.
 */
export async function runAsLeader(options: LeadershipOptions, work: (signal: AbortSignal, lease: LeadershipLease) => Promise<void>): Promise<void> {
  const { url, name, logger, signal } = options;
  if (url === null) {
    await work(signal, { name, epoch: null });
    return;
  }
  const retryMs = options.retryMs ?? 5_000;
  const idleTimeoutMs = Math.round(options.idleTimeoutMs ?? Math.max(3 * retryMs, 15_000));
  const pingTimeoutMs = Math.max(1, Math.min(Math.round(options.pingTimeoutMs ?? Math.min(retryMs, idleTimeoutMs / 3)), idleTimeoutMs - 1));
  const key = lockKey(name).toString();
  while (!signal.aborted) {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5_000,
      // a dead peer is noticed by the kernel too, not only by the next ping
      keepAlive: true,
      keepAliveInitialDelayMillis: Math.max(1_000, pingTimeoutMs),
      // every query on this connection has a client-side timeout (node-postgres then reports an error)
      query_timeout: Math.max(pingTimeoutMs, 5_000),
    });
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
        const epoch = await within(takeEpoch(client, name), Math.max(pingTimeoutMs, 5_000), 'taking the leadership epoch');
        logger.info(`${name}: this replica leads (epoch ${epoch})`);
        // a silent connection loss is noticed by a periodic ping that must answer before its deadline
        let pinging = false;
        const ping = setInterval(() => {
          if (pinging) return;
          pinging = true;
          within(client.query('select 1'), pingTimeoutMs, 'the leadership ping')
            .catch((err: Error) => {
              if (!lost.signal.aborted && !signal.aborted) logger.warn({ err: err.message }, `${name}: leadership ping failed`);
              lost.abort();
            })
            .finally(() => (pinging = false));
        }, retryMs);
        try {
          await work(lost.signal, { name, epoch });
        } finally {
          clearInterval(ping);
        }
        if (!signal.aborted) logger.warn({}, `${name}: leadership lost, standing by`);
      }
    } catch (err) {
      if (!signal.aborted) logger.warn({ err: (err as Error).message }, `${name}: cannot reach the database for leadership`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      // a silently dropped connection may never finish a polite close: do not wait for it
      await within(client.end(), pingTimeoutMs, 'closing the leadership connection').catch(() => {
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      });
    }
    if (signal.aborted) break;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, retryMs);
      signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }
}
