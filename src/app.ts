/**
 * The composition root: config → infrastructure (database, chains) → services → HTTP and background loops.
 * Nothing else constructs long-lived objects; everything is passed in from here.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import { openDatabase, type Database } from './db/connection.js';
import { buildHttpServer, type HttpServer, type ReadinessCheck } from './http/server.js';
import { AppDataService } from './orderbook/app-data.js';
import { registerOrderBookRoutes } from './orderbook/routes/index.js';
import { buildOrderBookServices, type OrderBookBuild } from './orderbook/build-services.js';
import { DEFAULT_ORDER_POLICY } from './orderbook/orders/order-ports.js';
import { registerAuctionRoutes, type AuctionReads } from './auction/auction-routes.js';
import { AuctionStore } from './auction/auction-store.js';
import { CompetitionStore } from './auction/competition-store.js';
import { createCompetitionStatus } from './auction/competition-status.js';
import { readPackageVersion } from './version.js';
import { devnetTemplateDir, startDevnet, type Devnet } from './chain/devnet/index.js';
import { templateCacheDir } from './db/pglite-init.js';
import { devnetNetwork, indexingSummary, rpcNetwork, type ChainNetwork } from './chain/network.js';
import type { ChainReader } from './chain/reader.js';
import { servedNetworkName } from './protocol/networks.js';
import { startFork } from './chain/devnet/fork.js';
import { ensureChainIdentity } from './chain/chain-identity.js';
import { registerDevnetRoutes } from './chain/devnet-routes.js';
import { startBackgroundLoops, type RunningLoops } from './loops.js';
import type { AuctionGate } from './auction/auction-loop.js';
import { ChainClock } from './chain/chain-clock.js';
import { createDevnetRpc } from './chain/devnet/rpc.js';
import { DevnetControl } from './control/devnet-control.js';
import { registerControlRoutes } from './control/control-routes.js';
import { restartableLoops, type RestartableLoops } from './control/restartable-loops.js';
import { openRedisConnection } from './infra/redis-connection.js';
import { EcdsaRecoveryPool } from './infra/ecdsa-recovery-pool.js';
import { createSimulator, registerSimulationRoutes } from './aux/simulation/index.js';
import { buildMarketServices, registerMarketRoutes, type MarketChainContext } from './aux/market/index.js';
import { BalanceStream, registerBalanceRoutes } from './aux/balances/index.js';
import { registerPartnerFeeRoutes } from './aux/partner-fees/routes.js';
import { TradeFeeReader } from './orderbook/trades/trade-fees.js';
import { openSharedBackend } from './infra/shared-backend.js';
import { buildNotifications, registerNotificationRoutes } from './aux/notifications/index.js';
import { startAffiliateProgram } from './aux/affiliate/start.js';
import { registerDashboard } from './dashboard/index.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { HooksService, registerHooksRoutes } from './aux/hooks/index.js';
import { DuneHooks } from './providers/dune-hooks.js';
import { buildSolverEngines, registerSolverEngineRoutes } from './solver-api/index.js';

export interface App {
  server: HttpServer;
  database: Database;
  networks: ChainNetwork[];
  orderBooks: Map<string, NetworkOrderBook>;
  devnet: Devnet | null;
  /** the auction loop of each network this replica leads */
  auctionLoops: RunningLoops['auctionLoops'];
  indexers: RunningLoops['indexers'];
  /** where things are, for the start-up banner */
  urls: { base: string; orderBook: Record<string, string>; docs: string; health: string; ready: string; devnetRpc: string | null };
  /** resolves when the app must stop by itself (e.g. the devnet died) with the reason */
  fatal: Promise<string>;
  /** the Prometheus registry and recorders (GET /metrics) */
  metrics: Metrics;
  close(): Promise<void>;
}

export interface StartOptions {
  /** listen on config.host:config.port (false: build everything, use server.inject) */
  listen?: boolean;
  /** use this database instead of opening one from the config (tests) */
  database?: Database;
  /** current time in unix seconds (tests) */
  now?: () => number;
  /** metrics registry (default: a new one with process metrics) */
  metrics?: Metrics;
  /** the node's own JSON-RPC traffic to the devnet goes to this URL instead (tests: a fault-injecting proxy) */
  devnetRpcVia?: (anvilRpcUrl: string) => Promise<string>;
  /** run the chain loops' notification producers (default true; false: a test steps its own producer alone) */
  notificationProducers?: boolean;
}

/** What every wiring step of `startApp` shares: the configuration, the log, the shutdown steps and the abort. */
/**
 * The devnet beside real chains, unless DEVNET_EXPOSE=true: its keys are public (the test mnemonic), so nothing of it
 * is served over HTTP — no order book, no dashboard entry (so no "Trade a CoW" with its keys), no /devnet. It still
 * runs (indexer, auctions) for the operator's own use through its RPC port.
 */
function isHiddenDevnet(network: ChainNetwork, networks: ChainNetwork[], config: Config): boolean {
  return network.devnet !== null && networks.length > 1 && !config.exposure.devnetExpose;
}

/** One shutdown step: what it stops (named in the log when it is slow) and how. */
type Closer = [what: string, close: () => Promise<void>];

/**
 * Runs the shutdown steps in reverse order of registration, one at a time. A step that fails is logged and the
 * next runs; a step still running after 2 s is named at warn (a slow stop says what it waits for).
 */
async function runClosers(closers: Closer[], logger: Logger): Promise<void> {
  for (const [what, close] of closers.splice(0).reverse()) {
    const started = performance.now();
    const slow = setTimeout(() => logger.warn(`shutdown: still stopping the ${what} after 2 s`), 2_000);
    slow.unref();
    try {
      await close();
    } catch (err) {
      logger.warn({ err }, `shutdown: stopping the ${what} failed`);
    } finally {
      clearTimeout(slow);
    }
    logger.debug(`shutdown: stopped the ${what} in ${Math.round(performance.now() - started)} ms`);
  }
}

interface Wiring {
  config: Config;
  logger: Logger;
  options: StartOptions;
  /** shutdown steps, run in reverse order by `close` (or when start-up fails) */
  closers: Closer[];
  abort: AbortController;
  metrics: Metrics;
  /** stops the app by itself with a reason (App.fatal) */
  fatalReason: (reason: string) => void;
}

export async function startApp(config: Config, logger: Logger, options: StartOptions = {}): Promise<App> {
  const version = readPackageVersion();
  let fatalReason: (reason: string) => void = () => {};
  const fatal = new Promise<string>((resolve) => (fatalReason = resolve));
  const w: Wiring = { config, logger, options, closers: [], abort: new AbortController(), metrics: options.metrics ?? createMetrics(), fatalReason: (r) => fatalReason(r) };
  // every background loop of every chain waits on this signal (a dozen per chain): Node's leak warning at 11 is noise
  setMaxListeners(100, w.abort.signal);

  try {
    const { database, devnet } = await openDatabaseAndDevnet(w);
    const { networks, defaultNetwork } = await connectNetworks(w, database, devnet);
    // the devnet's order book goes by the chain's time (deterministic mode: only by it), real chains' by the wall clock
    const clocks = new Map<string, ChainClock>();
    for (const n of networks) if (n.devnet) clocks.set(n.name, await ChainClock.start(n.reader, config.deterministic ? 'chain' : 'later-of', w.abort.signal));
    const server = await buildServer(w, database, networks, version);
    const orderBooks = await registerOrderBooks(w, server, { database, networks, defaultNetwork, version, clocks });
    // /devnet lists private keys and the faucet mints: next to real chains only when DEVNET_EXPOSE=true
    const devnetServed = devnet !== null && (networks.length === 1 || config.exposure.devnetExpose);
    if (devnetServed) registerDevnetRoutes(server, devnet);
    const { notifications } = await registerAuxiliaryApi(w, server, { database, networks, defaultNetwork, orderBooks });

    // solver engines (issue 12): the competing engines of each network, and our built-ins served over the API
    const solverEngines = new Map(networks.map((n) => [n.name, buildSolverEngines(n, config.solvers, { logger: logger.child({ module: 'solver-engines', chain: n.name }) })]));
    w.closers.push(['solver engines', async () => void (await Promise.all([...solverEngines.values()].map((e) => e.close())))]);
    // served only with SOLVER_ENGINE_TOKEN (issue 19): unset, no route (the driver runs the built-ins either way)
    const token = config.solverEngineToken;
    for (const network of token ? networks : []) {
      const { services } = solverEngines.get(network.name)!;
      registerSolverEngineRoutes(server, { engines: services, prefix: `/${network.name}`, token: token! });
      if (network.name === defaultNetwork) registerSolverEngineRoutes(server, { engines: services, token: token! });
    }

    // the control API holds auctions back with this gate (deterministic mode: from the start) and restarts the loops on revert
    const auctionGate: AuctionGate = { paused: config.deterministic };
    // the loops start once the server listens: their catch-up (indexing a fresh chain's history) does not hold up
    // the start; the control API's routes, registered before, reach them through this handle
    let started: RestartableLoops | null = null;
    const running = (): RestartableLoops => {
      if (!started) throw new Error('the background loops have not started yet');
      return started;
    };
    const loops: RestartableLoops = {
      get current() {
        return running().current;
      },
      pause: () => running().pause(),
      resume: () => running().resume(),
      stop: async () => started?.stop(),
    };
    const startLoops = (): RestartableLoops => restartableLoops((signal) => startBackgroundLoops({
      networks, database, orderBooks, logger, signal, onFatal: w.fatalReason, auctionGate,
      databaseUrl: options.database ? null : config.databaseUrl,
      bannedAddresses: config.bannedAddresses,
      deniedTokens: config.deniedTokens,
      auctions: config.auctions,
      fees: config.fees,
      solverPrivateKey: config.solverPrivateKey,
      ethflowRefunderKey: config.ethflow.refunderKey,
      solverEngines,
      notifications: options.notificationProducers === false ? undefined : { ...config.notifications, onDeliveries: () => notifications.dispatcher.wake() },
      metrics: w.metrics,
    }), w.abort.signal);
    w.closers.push(['background loops', () => loops.stop()]);
    const devnetName = networks.find((n) => n.devnet !== null)?.name ?? 'devnet';
    if (devnetServed) registerDevnetControl(server, { devnet: devnet!, network: devnetName, reader: networks.find((n) => n.name === devnetName)!.reader, database, loops, gate: auctionGate, clock: clocks.get(devnetName) ?? null, orderBooks });

    if (options.listen !== false) await server.listen({ host: config.host, port: config.port });
    else await server.ready();
    started = startLoops();
    return assembleApp(w, { server, database, networks, defaultNetwork, orderBooks, devnet, loops, fatal });
  } catch (err) {
    w.abort.abort();
    await runClosers(w.closers, logger);
    throw err;
  }
}

/** The database and the devnet, started side by side; a devnet that dies makes the app stop (App.fatal). */
async function openDatabaseAndDevnet(w: Wiring): Promise<{ database: Database; devnet: Devnet | null }> {
  const { config, logger, options, closers, abort } = w;
  const databasePromise = options.database
    ? Promise.resolve(options.database)
    : (logger.info(config.databaseUrl ? 'database: connecting to PostgreSQL' : `database: opening PGlite in ${join(config.dataDir, 'pglite')}`),
      openDatabase(config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: join(config.dataDir, 'pglite') }));
  const devnetLogger = { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) };
  // the app's signal stops the devnet's start-up only: once it runs, its closer stops it, after the HTTP server and
  // the loops (the app's signal aborts first thing in close(): a chain stopped then would fail the in-flight
  // requests being drained and leave the loops retrying a dead node until the shutdown's deadline)
  const startUp = new AbortController();
  const abortStartUp = (): void => startUp.abort();
  abort.signal.addEventListener('abort', abortStartUp, { once: true });
  const devnetPromise = config.fork
    ? startFork({
        forkUrl: config.fork.url,
        forkBlock: config.fork.block,
        extraTokens: config.fork.tokens,
        dataDir: config.dataDir,
        port: config.devnet.port,
        blockTime: Math.max(1, Math.round(config.devnet.blockTime)),
        activity: config.devnet.activity,
        logger: devnetLogger,
        signal: startUp.signal,
      }).then((fork) => (announceFork(logger, fork), fork))
    : config.devnet.enabled
    ? startDevnet({
        dataDir: join(config.dataDir, 'devnet-chain'),
        port: config.devnet.port,
        blockTime: config.devnet.blockTime,
        activity: config.devnet.activity,
        historyHours: config.devnet.historyHours,
        deterministic: config.deterministic,
        // a fresh chain is copied from the prepared template when there is one (`batchbook prepare`, npm ci)
        template: devnetTemplateDir(templateCacheDir(), { historyHours: config.devnet.historyHours, deterministic: config.deterministic }),
        logger: devnetLogger,
        signal: startUp.signal,
      })
    : Promise.resolve(null);
  const [dbResult, devnetResult] = await Promise.allSettled([databasePromise, devnetPromise]);
  abort.signal.removeEventListener('abort', abortStartUp);
  if (devnetResult.status === 'fulfilled' && devnetResult.value) closers.push(['devnet', () => devnetResult.value!.stop()]);
  if (dbResult.status === 'fulfilled' && !options.database) closers.push(['database', () => dbResult.value.close()]);
  if (dbResult.status === 'rejected') throw dbResult.reason;
  if (devnetResult.status === 'rejected') throw devnetResult.reason;
  const database = dbResult.value;
  const devnet = devnetResult.value;
  logger.info(`database: ready (${database.engine})`);
  if (devnet) {
    void devnet.exited.then((exit) => {
      if (!abort.signal.aborted) w.fatalReason(`the devnet (anvil) exited unexpectedly (code ${exit.code ?? 'none'}, signal ${exit.signal ?? 'none'})`);
    });
  }
  return { database, devnet };
}

/** Fork mode's start lines: the network name it is served under, and the replay warning on a real chain's id. */
function announceFork(logger: Logger, fork: Devnet): void {
  const { name, known } = servedNetworkName(fork.chainId);
  if (!known) {
    logger.warn(`fork: chain ${fork.chainId} is not a network batchbook knows; its order book is served as /${name}/api/v1 (a name derived from the chain id) and at /api/v1`);
  }
  const network = known ? name : `chain ${fork.chainId}`;
  logger.warn(
    `fork: this is a fork of ${known ? `${name} (chain ${fork.chainId})` : `chain ${fork.chainId}`}: orders and cancellations signed on it carry signatures valid on the real ${network} (same chain id, same settlement contract), so they can be replayed there — sign only with the dev accounts listed at /devnet`,
  );
}

/** The networks served (the devnet, then each RPC_URL_<chainId>), each checked against the chain it was indexed from. */
async function connectNetworks(w: Wiring, database: Database, devnet: Devnet | null): Promise<{ networks: ChainNetwork[]; defaultNetwork: string | null }> {
  const { config, logger, options } = w;
  const networks: ChainNetwork[] = [];
  if (devnet) networks.push(await devnetNetwork(options.devnetRpcVia ? { ...devnet, rpcUrl: await options.devnetRpcVia(devnet.rpcUrl) } : devnet, config));
  for (const [chainId, url] of config.rpcUrls) {
    if (devnet?.fork?.chainId === chainId) throw new Error(`RPC_URL_${chainId}: chain ${chainId} is already served as the fork of FORK_URL; unset one of them`);
    logger.info(`chain ${chainId}: connecting to ${new URL(url).host}`);
    networks.push(await rpcNetwork(chainId, url, config));
  }
  for (const network of networks) {
    // only the devnet is reset when its block 0 changes; a real chain's changed identity stops the node
    const { reset } = await ensureChainIdentity(database.db, network.chainId, network.genesisHash, { resettable: network.devnet !== null, forceReset: network.devnet?.fresh ?? false });
    if (reset) logger.warn(`${network.name}: the chain changed (block 0 differs); its indexed and order-book data were deleted`);
  }
  const defaultNetwork = config.defaultNetwork ?? (networks.find((n) => n.devnet === null) ?? networks[0])?.name ?? null;
  if (config.defaultNetwork && !networks.some((n) => n.name === config.defaultNetwork)) {
    throw new Error(`DEFAULT_NETWORK=${config.defaultNetwork} is not one of the served networks (${networks.map((n) => n.name).join(', ') || 'none'})`);
  }
  return { networks, defaultNetwork };
}

/** The HTTP server with its readiness checks (database, each chain) and, when configured, Redis-backed rate limits. */
async function buildServer(w: Wiring, database: Database, networks: ChainNetwork[], version: string): Promise<HttpServer> {
  const { config, logger, closers, metrics } = w;
  const readiness: ReadinessCheck[] = [
    { name: 'database', check: () => database.ping() },
    ...networks.map((n) => ({ name: `chain:${n.name}`, check: async () => (await n.reader.blockNumber()) >= 0n })),
  ];
  const redis = config.redisUrl ? openRedisConnection({ url: config.redisUrl, name: 'batchbook', logger }) : null;
  if (redis) {
    closers.push(['redis', async () => {
      await redis.quit().catch(() => redis.disconnect());
    }]);
  }
  const indexing = () => Object.fromEntries(networks.map((n) => [n.name, indexingSummary(n)]));
  return buildHttpServer({ logger, rateLimit: config.rateLimit, readiness, indexing, version, redis, redisKeyPrefix: config.redisKeyPrefix, trustProxy: config.exposure.trustProxy, metrics });
}

/** One network's order book: its services and the auction reads its routes and the dashboard show. */
type NetworkOrderBook = OrderBookBuild & { auctionReads: AuctionReads };

/** The order book of each network under /{network}/api/v1, and the default network's also under /api/v1. */
async function registerOrderBooks(
  w: Wiring,
  server: HttpServer,
  { database, networks, defaultNetwork, version, clocks }: { database: Database; networks: ChainNetwork[]; defaultNetwork: string | null; version: string; clocks: Map<string, ChainClock> },
): Promise<Map<string, NetworkOrderBook>> {
  const { config, logger, options, metrics } = w;
  const appData = new AppDataService(database.db);
  // order signatures are recovered on worker threads (the other cores), not on the event loop
  const recovery = new EcdsaRecoveryPool();
  w.closers.push(['signature recovery workers', () => recovery.close()]);
  const orderBooks = new Map<string, NetworkOrderBook>();
  for (const network of networks) {
    const now = options.now ?? clocks.get(network.name)?.now ?? DEFAULT_ORDER_POLICY.now;
    // the auction and the solver competition as the order book shows them (GET /auction, /solver_competition, /orders/{uid}/status)
    const competitions = new CompetitionStore(database.db, network.chainId);
    const auctionReads: AuctionReads = { auctions: new AuctionStore(database.db, network.chainId), competitions };
    const build = buildOrderBookServices(network, database.db, config, appData, now, (err) => {
      metrics.providers.error('external-orderbook');
      logger.warn({ err: (err as Error).message, chain: network.name }, 'external price estimator failed');
    }, recovery.recover, (orders) => createCompetitionStatus({ chainId: network.chainId, db: database.db, orders, competitions, now }));
    orderBooks.set(network.name, { ...build, auctionReads });
    if (isHiddenDevnet(network, networks, config)) continue;
    const ctx = { network: { name: network.name, chainId: network.chainId }, services: build.services, rateLimit: config.rateLimit, version };
    const routes = async (scope: unknown) => {
      registerOrderBookRoutes(scope as HttpServer, ctx);
      registerAuctionRoutes(scope as HttpServer, auctionReads);
    };
    await server.register(routes, { prefix: `/${network.name}` });
    if (network.name === defaultNetwork) await server.register(routes);
  }
  return orderBooks;
}

interface AuxiliaryInputs {
  database: Database;
  networks: ChainNetwork[];
  defaultNetwork: string | null;
  orderBooks: Map<string, NetworkOrderBook>;
}

/**
 * The auxiliary API and the dashboard: market data, balances (REST and stream), simulation, notifications,
 * the affiliate program and hooks analytics. Returns the notifications (the chain loops produce them).
 */
async function registerAuxiliaryApi(w: Wiring, server: HttpServer, inputs: AuxiliaryInputs): Promise<{ notifications: Awaited<ReturnType<typeof buildNotifications>> }> {
  const { config, logger, options, closers, abort } = w;
  const { database, networks, defaultNetwork, orderBooks } = inputs;
  const marketChains = registerMarket(w, server, inputs);

  // the live dashboard at / (issue 13)
  registerDashboard(server, { networks: networks.filter((n) => !isHiddenDevnet(n, networks, config)), defaultNetwork, orderBooks, markets: marketChains, db: database.db, now: options.now ?? (() => Math.floor(Date.now() / 1000)) });

  await registerBalances(w, server, networks);
  registerSimulation(w, server, database, networks);
  // partner-fee accounts (issue 23)
  registerPartnerFeeRoutes(server, { chains: new Map(networks.map((n) => [n.chainId, new TradeFeeReader({ chainId: n.chainId, db: database.db })])) });

  // notifications (issue 11): routes, the outbox dispatcher of this replica; the producers run with the chain loops
  const notifications = await buildNotifications({ config, networks, db: database.db, logger, now: options.now });
  registerNotificationRoutes(server, notifications.routes);
  const dispatching = notifications.dispatcher.run(abort.signal);
  closers.push(['notification dispatcher', () => dispatching]);
  // affiliate program (issue 10): routes behind the CMS_ENABLED gate, and its sync loop on one replica
  closers.push(['affiliate program', await startAffiliateProgram({ server, config, db: database.db, chains: [...marketChains.values()], logger, signal: abort.signal, databaseUrl: options.database ? null : config.databaseUrl })]);
  // hooks analytics: first-party rows of the served networks; other reference networks from the analytics provider
  const externalHooks = config.analyticsApiKey ? new DuneHooks({ apiKey: config.analyticsApiKey, queryId: config.analyticsHooksQueryId, baseUrl: config.analyticsApiUrl ?? undefined, timeoutMs: config.outboundTimeoutMs }) : null;
  registerHooksRoutes(server, {
    service: new HooksService({ db: database.db, served: new Map(networks.map((n) => [n.name, n.chainId])), external: externalHooks, now: options.now }),
    logger,
  });
  return { notifications };
}

/** Token prices, holders, slippage and yield of each network, with the optional providers configured. */
function registerMarket(w: Wiring, server: HttpServer, { database, networks, orderBooks }: AuxiliaryInputs): Map<number, MarketChainContext> {
  const { config, logger, metrics } = w;
  const marketChains = new Map<number, MarketChainContext>();
  for (const network of networks) {
    marketChains.set(network.chainId, {
      network,
      ...buildMarketServices(network, database.db, config, {
        nativePrices: orderBooks.get(network.name)!.nativePrices,
        logger: logger.child({ module: 'market', chain: network.name }),
        onProviderError: (provider) => metrics.providers.error(provider),
        providers: {
          ...(config.holderApis.moralisApiKey ? { moralis: { apiKey: config.holderApis.moralisApiKey } } : {}),
          ...(config.holderApis.ethplorerApiKey ? { ethplorer: { apiKey: config.holderApis.ethplorerApiKey } } : {}),
          ...(config.holderApis.goldRushApiKey ? { goldRush: { apiKey: config.holderApis.goldRushApiKey } } : {}),
          ...(config.analyticsYieldQueryId !== null ? { analytics: { yieldQueryId: config.analyticsYieldQueryId, baseUrl: config.analyticsApiUrl ?? undefined } } : {}),
        },
      }),
    });
  }
  registerMarketRoutes(server, { chains: marketChains });
  return marketChains;
}

/** Balances: REST and the per-block SSE stream, shared across replicas through Redis when configured. */
async function registerBalances(w: Wiring, server: HttpServer, networks: ChainNetwork[]): Promise<void> {
  const { config, logger, closers, abort, metrics } = w;
  const shared = await openSharedBackend({ redisUrl: config.redisUrl, namespace: config.redisKeyPrefix, logger });
  closers.push(['shared backend', () => shared.close()]);
  const streams = networks.map(
    (n) =>
      new BalanceStream({
        chainId: n.chainId,
        reader: n.reader,
        vaultRelayer: n.vaultRelayer,
        replicas: shared.kind === 'redis' ? { coordination: shared.coordination, pubsub: shared.pubsub } : null,
        logger,
        signal: abort.signal,
      }),
  );
  closers.push(['balance streams', async () => {
    for (const stream of streams) await stream.close();
  }]);
  const balanceRoutes = registerBalanceRoutes(server, {
    chains: networks.map((n, i) => ({ chainId: n.chainId, reader: n.reader, vaultRelayer: n.vaultRelayer, nativeCurrency: n.nativeCurrency, stream: streams[i]! })),
    signal: abort.signal,
  });
  metrics.sseConnections.observe('balances', () => balanceRoutes.connections);
}

/** Bundle simulation on a fork of each network (or the external provider when configured). */
function registerSimulation(w: Wiring, server: HttpServer, database: Database, networks: ChainNetwork[]): void {
  const { config, logger, closers } = w;
  const simulator = createSimulator({ tenderly: config.simulation, outboundTimeoutMs: config.outboundTimeoutMs, logger });
  closers.push(['simulator', () => simulator.stop()]);
  registerSimulationRoutes(server, {
    chains: new Map(networks.map((n) => [n.chainId, { rpcUrl: n.rpcUrl, wrappedNative: n.wrappedNative ?? undefined }])),
    simulator,
    db: database.db,
    publicBaseUrl: config.exposure.publicUrl,
    options: { logger, maxRunsPerClient: config.simulationRunsPerClient },
  });
}

/** The control API of the devnet (/devnet/control/...): snapshots, mining, time, auctions on demand. */
function registerDevnetControl(
  server: HttpServer,
  parts: { devnet: Devnet; network: string; reader: ChainReader; database: Database; loops: RestartableLoops; gate: AuctionGate; clock: ChainClock | null; orderBooks: Map<string, NetworkOrderBook> },
): void {
  const orderBook = parts.orderBooks.get(parts.network)!;
  const control = new DevnetControl({
    network: parts.network,
    rpc: createDevnetRpc(parts.devnet.rpcUrl),
    db: parts.database.db,
    loops: parts.loops,
    gate: parts.gate,
    clock: parts.clock,
    orders: orderBook.services.orders,
    clearCaches: () => {
      (orderBook.nativePrices as { clear?: () => void }).clear?.();
      parts.reader.clearCaches();
    },
  });
  registerControlRoutes(server, control);
}

/** The running app: where it listens, what it serves, and `close` (HTTP first, then the rest in reverse order). */
function assembleApp(
  w: Wiring,
  parts: {
    server: HttpServer;
    database: Database;
    networks: ChainNetwork[];
    defaultNetwork: string | null;
    orderBooks: Map<string, NetworkOrderBook>;
    devnet: Devnet | null;
    loops: RestartableLoops;
    fatal: Promise<string>;
  },
): App {
  const { config, logger, closers, abort, metrics } = w;
  const { server, database, networks, defaultNetwork, orderBooks, devnet, loops, fatal } = parts;
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  let closed = false;
  return {
    server,
    database,
    networks,
    orderBooks,
    devnet,
    // the loops of the moment (the control API's revert starts them afresh)
    get auctionLoops() {
      return loops.current.auctionLoops;
    },
    get indexers() {
      return loops.current.indexers;
    },
    fatal,
    metrics,
    urls: {
      base,
      orderBook: Object.fromEntries([
        ...networks.filter((n) => !isHiddenDevnet(n, networks, config)).map((n) => [n.name, `${base}/${n.name}/api/v1`]),
        ...(defaultNetwork ? [[`default: ${defaultNetwork}`, `${base}/api/v1`]] : []),
      ]),
      docs: `${base}/docs`,
      health: `${base}/healthz`,
      ready: `${base}/readyz`,
      devnetRpc: devnet?.rpcUrl ?? null,
    },
    async close() {
      if (closed) return;
      closed = true;
      abort.abort();
      // stop accepting and drain in-flight requests first, then loops, chain and database
      await server.close().catch((err) => logger.warn({ err }, 'http: close failed'));
      await runClosers(closers, logger);
    },
  };
}
