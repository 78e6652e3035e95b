/**
 * The node's Prometheus metrics: one registry, created by the composition root and passed to whoever records,
 * with a small typed recorder per thing we measure. Nothing here touches prom-client's global default registry,
 * so two apps in one process (tests) never share counters.
 *
 * Labels are bounded by construction: HTTP routes are route templates (never raw paths), errorTypes come from
 * the order book's fixed list, chains and providers from configuration.
 *
 * @example
 *   const metrics = createMetrics();
 *   metrics.orders.rejected('InsufficientBalance');
 *   metrics.auctions.built('devnet', 0.012);
 *   metrics.outbox.observe(async () => countPendingMessages()); // read at every scrape
 *   const text = await metrics.registry.metrics();
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A number read at scrape time (a queue length, open connections, ...). */
export type GaugeReading = () => number | Promise<number>;

export interface HttpRecorder {
  /** one finished request: method, route template ('unmatched' for a 404 without a route), status, seconds */
  request(method: string, route: string, status: number, seconds: number): void;
}

export interface OrderRecorder {
  created(): void;
  rejected(errorType: string): void;
}

export interface AuctionRecorder {
  /** time to build one auction (the SELECT of solvable orders, balance checks, prices) */
  built(chain: string, seconds: number): void;
  /** solutions of one competition: `winner`, `ranked` (valid, not chosen), `rejected` (did not simulate) */
  solutions(chain: string, outcome: 'winner' | 'ranked' | 'rejected', count: number): void;
  /** a submitted settlement's outcome (mined, reverted, dropped, ...) */
  settlement(chain: string, outcome: string): void;
}

export interface ReadingRecorder {
  /** registers a reading for a label value (replaces the earlier one for the same value) */
  observe(label: string, read: GaugeReading): void;
}

export interface OutboxRecorder {
  /** the notifications' outbox depth (messages waiting for delivery), read at every scrape */
  observe(read: GaugeReading): void;
}

export interface Metrics {
  readonly registry: Registry;
  readonly http: HttpRecorder;
  readonly orders: OrderRecorder;
  readonly auctions: AuctionRecorder;
  /** blocks between the chain head and the indexer's last committed block, per chain */
  readonly indexerLag: { set(chain: string, blocks: number): void };
  /** open SSE streams, per stream kind (e.g. 'balances') */
  readonly sseConnections: ReadingRecorder;
  readonly outbox: OutboxRecorder;
  /** one failed call of an external provider (the fallback moved on) */
  readonly providers: { error(provider: string): void };
}

export interface MetricsOptions {
  /** CPU, memory, event loop, GC of this process (default true) */
  processMetrics?: boolean;
  /** metric name prefix (default 'batchbook_') */
  prefix?: string;
}

/** Sums readings that may fail: a failing reading counts as absent rather than failing the whole scrape. */
async function readAll(readings: Map<string, GaugeReading>): Promise<Array<[string, number]>> {
  const values = await Promise.all([...readings].map(async ([label, read]) => [label, await Promise.resolve().then(read).catch(() => NaN)] as [string, number]));
  return values.filter(([, v]) => Number.isFinite(v));
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const prefix = options.prefix ?? 'batchbook_';
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix });

  const httpDuration = new Histogram({
    name: `${prefix}http_request_duration_seconds`,
    help: 'HTTP requests by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const orders = new Counter({
    name: `${prefix}orders_total`,
    help: 'Order submissions by result (created | rejected) and errorType (empty when created)',
    labelNames: ['result', 'error_type'] as const,
    registers,
  });
  const auctionBuild = new Histogram({
    name: `${prefix}auction_build_seconds`,
    help: 'Time to build one auction, per chain',
    labelNames: ['chain'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const solutions = new Counter({ name: `${prefix}solutions_total`, help: 'Solutions by outcome (winner | ranked | rejected), per chain', labelNames: ['chain', 'outcome'] as const, registers });
  const settlements = new Counter({ name: `${prefix}settlements_total`, help: 'Submitted settlements by outcome, per chain', labelNames: ['chain', 'outcome'] as const, registers });
  const indexerLag = new Gauge({ name: `${prefix}indexer_lag_blocks`, help: 'Blocks between the chain head and the last indexed block, per chain', labelNames: ['chain'] as const, registers });
  const providerErrors = new Counter({ name: `${prefix}provider_errors_total`, help: 'Failed calls of external data providers, per provider', labelNames: ['provider'] as const, registers });

  const sseReadings = new Map<string, GaugeReading>();
  new Gauge({
    name: `${prefix}sse_connections`,
    help: 'Open server-sent-event streams, per stream kind',
    labelNames: ['stream'] as const,
    registers,
    async collect() {
      this.reset();
      for (const [label, value] of await readAll(sseReadings)) this.set({ stream: label }, value);
    },
  });
  const outboxReadings = new Map<string, GaugeReading>();
  new Gauge({
    name: `${prefix}outbox_depth`,
    help: 'Notification messages waiting in the outbox for delivery',
    registers,
    async collect() {
      this.reset();
      const values = await readAll(outboxReadings);
      if (values.length > 0) this.set(values.reduce((sum, [, v]) => sum + v, 0));
    },
  });

  return {
    registry,
    http: { request: (method, route, status, seconds) => httpDuration.observe({ method, route, status_code: String(status) }, seconds) },
    orders: {
      created: () => orders.inc({ result: 'created', error_type: '' }),
      rejected: (errorType) => orders.inc({ result: 'rejected', error_type: errorType }),
    },
    auctions: {
      built: (chain, seconds) => auctionBuild.observe({ chain }, seconds),
      solutions: (chain, outcome, count) => {
        if (count > 0) solutions.inc({ chain, outcome }, count);
      },
      settlement: (chain, outcome) => settlements.inc({ chain, outcome }),
    },
    indexerLag: { set: (chain, blocks) => indexerLag.set({ chain }, Math.max(0, blocks)) },
    sseConnections: { observe: (label, read) => void sseReadings.set(label, read) },
    outbox: { observe: (read) => void outboxReadings.set('outbox', read) },
    providers: { error: (provider) => providerErrors.inc({ provider }) },
  };
}
