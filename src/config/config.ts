/**
 * Configuration: read once from the environment (and an optional `.env` file) at start, validated, typed.
 * Nothing else in the code base reads `process.env`.
 *
 * @example
 *   const config = loadConfig(process.env); // throws ConfigError('PORT: expected ...')
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';
import { DEFAULT_FEE_POLICIES, FeeScheduleError, parseFeeFactor, parseFeeSchedule, type ScheduledPolicy } from '../protocol/index.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface RateLimitConfig {
  /** requests per second per client for POST /quote; 0 disables */
  quote: number;
  /** requests per second per client for order submission and cancellation; 0 disables */
  orders: number;
  /** requests per second per client for every other route; 0 disables */
  other: number;
}

/** Protocol and partner fees (issue 23): FEE_POLICIES, FEE_MAX_PARTNER_FEE, FEE_UPCOMING_POLICIES + FEE_UPCOMING_FROM. */
export interface FeesConfig {
  /** in order of application; default production's documented schedule */
  policies: ScheduledPolicy[];
  /** cap of all partner fees of an order together, compounded (default 0.01) */
  maxPartnerFee: number;
  /** replaces `policies` in auctions built at or after `from` (unix ms) */
  upcoming: { policies: ScheduledPolicy[]; from: number } | null;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** chain id → RPC URL (http(s) or ws(s)) */
  rpcUrls: Map<number, string>;
  devnet: { enabled: boolean; port: number; blockTime: number; activity: boolean; historyHours: number };
  /**
   * FORK_URL (+ FORK_BLOCK, FORK_TOKENS): the embedded anvil forks this live chain instead of running the devnet
   * (issue 20). The URL may carry an API key: it is never logged nor served. null: the devnet.
   */
  fork: { url: string; block: number | null; tokens: `0x${string}`[] } | null;
  /**
   * DETERMINISTIC: the devnet runs the same way every time (no bot, no history, fixed genesis timestamp and gas
   * prices, blocks only from transactions and the control API), auctions run only when asked (POST
   * /devnet/control/auctions/run) and the order book reads the chain's time
   */
  deterministic: boolean;
  /** build auctions and settle them with the built-in solvers (the devnet's solver account) */
  auctions: { enabled: boolean; everyBlocks: number };
  /** SOLVER_PRIVATE_KEY: the account the driver settles from on real chains (must be allow-listed there); null: none */
  solverPrivateKey: `0x${string}` | null;
  /**
   * ETH-flow. ETHFLOW_CONTRACTS: the eth-flow contracts followed on real chains and forks (unset: production's of
   * that chain; the devnet always follows its own). ETHFLOW_REFUNDER_KEY: the account that refunds expired
   * eth-flow orders on real chains (unset: no refunder there; the devnet refunds from its solver account)
   */
  ethflow: { contracts: string[] | null; refunderKey: `0x${string}` | null };
  /** SOLVERS / SOLVER_TIME_LIMIT_MS: the competing solver engines (none listed: the built-ins) and their time per auction */
  solvers: SolversConfig;
  /**
   * SOLVER_ENGINE_TOKEN: the bearer token of our built-in engines' HTTP routes (`/solvers/{name}/solve`); null: those
   * routes are not served (the driver still runs the built-ins in process)
   */
  solverEngineToken: string | null;
  redisUrl: string | null;
  /** prefix of every Redis key and channel, so several deployments can share one Redis */
  redisKeyPrefix: string;
  amqpUrl: string | null;
  logLevel: LogLevel;
  rateLimit: RateLimitConfig;
  /** default network served at the root `/api/...` (a network name) */
  defaultNetwork: string | null;
  /** lowercase addresses refused with 403 Forbidden */
  bannedAddresses: Set<string>;
  /** lowercase token addresses refused with UnsupportedToken */
  deniedTokens: Set<string>;
  /** optional external price estimator: base URL of a compatible order book (e.g. https://host/mainnet) */
  externalQuoteUrl: string | null;
  /**
   * Content features (affiliate program, notifications). On by default, served from our own database;
   * CMS_ENABLED=false turns their routes into 503. With CMS_BASE_URL + CMS_API_KEY an external Strapi-style CMS
   * is used as the affiliate-code store.
   */
  cms: { enabled: boolean; apiKey: string | null; baseUrl: string | null };
  analyticsApiKey: string | null;
  /** ANALYTICS_API_URL: the analytics provider's base URL (default its public API, https://api.dune.com) */
  analyticsApiUrl: string | null;
  simulation: { apiKey: string | null; projectName: string | null; orgName: string | null };
  /** SIMULATION_MAX_STORED_RUNS_PER_CLIENT: stored simulation runs kept per client, the newest (default 100) */
  simulationRunsPerClient: number;
  coingeckoApiKey: string | null;
  /** optional holder APIs for topHolders (first-party indexed holders come first where exact) */
  holderApis: { moralisApiKey: string | null; ethplorerApiKey: string | null; goldRushApiKey: string | null };
  /** saved analytics query whose rows are pools (needs ANALYTICS_API_KEY) */
  analyticsYieldQueryId: number | null;
  /** saved analytics query GET /hooks runs for reference networks we do not serve (needs ANALYTICS_API_KEY) */
  analyticsHooksQueryId: number;
  /** timeout applied to every outbound HTTP/RPC call, ms */
  outboundTimeoutMs: number;
  /** hostile clients and real chains (issue 14): client identity, exposure of the devnet, per-client bounds */
  exposure: {
    /** TRUST_PROXY: proxies whose X-Forwarded-For names the client (hop count or addresses/CIDRs); false: none */
    trustProxy: TrustProxy;
    /** DEVNET_EXPOSE: serve the faucet and /devnet (which lists keys) next to real chains */
    devnetExpose: boolean;
    /** PUBLIC_URL: base of absolute links in responses (simulation results); null: relative links */
    publicUrl: string | null;
  };
  notifyChannels: NotifyChannelsConfig;
  notifications: NotificationsConfig;
  /** affiliate program (issue 10): reward terms copied onto each code at registration, signing domain, analytics */
  affiliate: AffiliateConfig;
  fees: FeesConfig;
}

export interface AffiliateConfig {
  /** USD per trigger reached, split between affiliate, trader and DAO */
  rewardAmount: number;
  /** USD of eligible volume per reward */
  triggerVolume: number;
  /** days after a trader's first trade during which their volume counts */
  timeCapDays: number;
  /** USD of volume per trader that counts at most */
  volumeCap: number;
  /** percentages; they sum to 100 */
  splitAffiliatePct: number;
  splitTraderPct: number;
  splitDaoPct: number;
  /** EIP-712 domain name of registrations (version "1", no chainId, no verifyingContract) */
  domainName: string;
  /** optional external statistics (with ANALYTICS_API_KEY): saved analytics queries taking an `address` parameter */
  analyticsAffiliateStatsQueryId: number | null;
  analyticsTraderStatsQueryId: number | null;
  /**
   * AFFILIATE_CHAINS: chain ids whose trades count for rewards (and on which a registration signature is checked);
   * null: every real chain served, or the devnet when it is the only chain
   */
  chains: number[] | null;
  /** AFFILIATE_MIN_LIQUIDITY_USD (default 100,000): a token counts only with this much AMM liquidity, in USD */
  minLiquidityUsd: number;
  /** AFFILIATE_MIN_LIQUIDITY_USD_<chainId>: the same, for one chain */
  minLiquidityUsdByChain: Record<number, number>;
}


/** Notifications (issue 11): producer and delivery outbox. Channel settings live in their own block. */
export interface NotificationsConfig {
  /** confirmations a triggering block needs; null = the default of each chain (0 on the devnet, 2 elsewhere) */
  confirmations: number | null;
  /** a fill at least this much better than the limit price is announced as `price_improvement` */
  priceImprovementBps: number;
  /** a delivery failing for this long is dead-lettered, ms */
  maxAgeMs: number;
  /** exponential backoff with full jitter: base and cap, ms */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** a claimed delivery is offered again after this long if its dispatcher vanished, ms */
  leaseMs: number;
  /** how often the producer and the dispatcher look for work when nothing wakes them, ms */
  pollIntervalMs: number;
  /** deliveries in flight at once per dispatcher */
  concurrency: number;
}

export interface SolversConfig {
  /** built-in by name (url null) or external at `url` (`url + "/solve"`, `url + "/notify"`); empty: both built-ins */
  engines: Array<{ name: string; url: string | null }>;
  timeLimitMs: number;
}

export const BUILT_IN_SOLVERS = ['cow-matcher', 'amm-router'] as const;

export class ConfigError extends Error {
  constructor(readonly variable: string, readonly expected: string, readonly got: string | undefined) {
    super(`${variable}: expected ${expected}, got ${got === undefined ? 'nothing' : `'${got}'`}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === null) return def;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`, raw);
  }
  return Number(raw);
}

function num(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === null) return def;
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || n < min || n > max) throw new ConfigError(name, `a number from ${min} to ${max}`, raw);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return def;
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, 'true or false', raw);
}

function url(env: Env, name: string, schemes: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `a URL (${schemes.join(', ')})`, raw);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new ConfigError(name, `a URL (${schemes.join(', ')})`, raw);
  return raw;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration as `90s`, `15m`, `24h`, `1d`, `500ms` or plain seconds; returns ms. */
function duration(env: Env, name: string, defMs: number, minMs: number): number {
  const raw = str(env, name);
  if (raw === null) return defMs;
  const m = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(raw);
  const ms = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? 's']! : NaN;
  if (!Number.isSafeInteger(ms) || ms < minMs) throw new ConfigError(name, `a duration of at least ${minMs} ms such as 90s, 15m, 24h or 1d`, raw);
  return ms;
}

function addressList(env: Env, name: string): Set<string> {
  const raw = str(env, name);
  const out = new Set<string>();
  if (raw === null) return out;
  for (const part of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(part)) throw new ConfigError(name, 'a comma-separated list of 0x addresses', part);
    out.add(part.toLowerCase());
  }
  return out;
}

function trustProxy(env: Env): TrustProxy {
  const parsed = parseTrustProxy(str(env, 'TRUST_PROXY'));
  if (parsed === null) throw new ConfigError('TRUST_PROXY', 'a hop count or a comma-separated list of proxy IP addresses/CIDRs (e.g. 127.0.0.1/32,10.0.0.0/8)', env.TRUST_PROXY);
  return parsed;
}

/** a 32-byte hex private key; the error never echoes it */
function solverPrivateKey(env: Env, name = 'SOLVER_PRIVATE_KEY'): `0x${string}` | null {
  const raw = str(env, name);
  if (raw === null) return null;
  const key = raw.startsWith('0x') ? raw : `0x${raw}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key) || /^0x0{64}$/.test(key)) throw new ConfigError(name, 'a 32-byte hex private key (64 hex digits, 0x optional)', '(hidden)');
  return key.toLowerCase() as `0x${string}`;
}

/** SOLVER_ENGINE_TOKEN: at least 16 printable characters without spaces (it goes in a header); never echoed. */
function solverEngineToken(env: Env): string | null {
  const token = str(env, 'SOLVER_ENGINE_TOKEN');
  if (token === null) return null;
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) throw new ConfigError('SOLVER_ENGINE_TOKEN', '16 to 512 printable ASCII characters without spaces', '(hidden)');
  return token;
}

/** Loopback hosts, where an engine may be reached over plain http. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * SOLVERS: comma-separated `name=url` (an external engine) or a built-in name; unset: both built-ins. An engine's
 * solutions and our auctions travel over its URL: https unless the engine is on loopback.
 */
function solvers(env: Env): SolversConfig {
  const raw = str(env, 'SOLVERS');
  const engines: SolversConfig['engines'] = [];
  const expected = `a comma-separated list of name=http(s)://url or built-in names (${BUILT_IN_SOLVERS.join(', ')})`;
  for (const part of raw === null ? [] : raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq).trim();
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(name) || engines.some((e) => e.name === name)) throw new ConfigError('SOLVERS', `${expected}, each name once`, part);
    if (eq < 0) {
      if (!(BUILT_IN_SOLVERS as readonly string[]).includes(name)) throw new ConfigError('SOLVERS', expected, part);
      engines.push({ name, url: null });
      continue;
    }
    const target = part.slice(eq + 1).trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(target);
    } catch {
      parsed = null;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError('SOLVERS', expected, part);
    if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) throw new ConfigError('SOLVERS', `${expected}; https for engines not on loopback`, part);
    engines.push({ name, url: target.replace(/\/+$/, '') });
  }
  return { engines, timeLimitMs: int(env, 'SOLVER_TIME_LIMIT_MS', 2_000, 100, 60_000) };
}

/** FORK_URL, FORK_BLOCK, FORK_TOKENS; errors never echo the URL (it may carry an API key) */
function forkConfig(env: Env, deterministic: boolean): Config['fork'] {
  const raw = str(env, 'FORK_URL');
  if (raw === null) {
    for (const name of ['FORK_BLOCK', 'FORK_TOKENS']) if (str(env, name) !== null) throw new ConfigError(name, 'FORK_URL to be set as well', env[name]);
    return null;
  }
  let parsed: URL | null;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol)) throw new ConfigError('FORK_URL', 'a JSON-RPC URL (http, https, ws, wss)', '(hidden)');
  if (deterministic) throw new ConfigError('DETERMINISTIC', 'false with FORK_URL (deterministic mode is for the devnet)', env.DETERMINISTIC);
  if (str(env, 'DEVNET') !== null && !bool(env, 'DEVNET', true)) throw new ConfigError('DEVNET', 'true or unset with FORK_URL (the fork runs in the embedded anvil)', env.DEVNET);
  const block = str(env, 'FORK_BLOCK');
  if (block !== null && !/^\d{1,15}$/.test(block)) throw new ConfigError('FORK_BLOCK', 'a block number', block);
  return { url: raw, block: block === null ? null : Number(block), tokens: [...addressList(env, 'FORK_TOKENS')] as `0x${string}`[] };
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Parses and validates the whole configuration; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const rpcUrls = new Map<number, string>();
  for (const [key, value] of Object.entries(env)) {
    const m = /^RPC_URL_(.+)$/.exec(key);
    if (!m || value === undefined || value.trim() === '') continue;
    if (!/^\d+$/.test(m[1]!)) throw new ConfigError(key, 'RPC_URL_<numeric chain id>', key);
    const chainId = Number(m[1]);
    if (chainId === 31337) throw new ConfigError(key, 'a chain id other than 31337 (reserved for the embedded devnet)', value);
    rpcUrls.set(chainId, url(env, key, ['http', 'https', 'ws', 'wss'])!);
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) throw new ConfigError('LOG_LEVEL', LOG_LEVELS.join(' | '), env.LOG_LEVEL);

  const host = str(env, 'HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) throw new ConfigError('HOST', 'a host name or IP address', host);

  const defaultNetwork = str(env, 'DEFAULT_NETWORK');
  if (defaultNetwork !== null && !/^[a-z_]+$/.test(defaultNetwork)) throw new ConfigError('DEFAULT_NETWORK', 'a network name such as mainnet or devnet', defaultNetwork);

  const deterministic = bool(env, 'DETERMINISTIC', false);
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host,
    dataDir: resolve(cwd, str(env, 'DATA_DIR') ?? './.batchbook'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres', 'postgresql']),
    rpcUrls,
    devnet: {
      enabled: bool(env, 'DEVNET', rpcUrls.size === 0) || str(env, 'FORK_URL') !== null,
      port: int(env, 'DEVNET_PORT', 8545, 0, 65535),
      blockTime: num(env, 'DEVNET_BLOCK_TIME', 2, 0.1, 3600),
      // deterministic mode has neither, whatever is set
      activity: bool(env, 'DEVNET_ACTIVITY', true) && !deterministic,
      historyHours: deterministic ? 0 : int(env, 'DEVNET_HISTORY_HOURS', 24, 0, 168),
    },
    fork: forkConfig(env, deterministic),
    deterministic,
    auctions: { enabled: bool(env, 'AUCTIONS', true), everyBlocks: int(env, 'AUCTION_EVERY_BLOCKS', 1, 1, 1000) },
    solverPrivateKey: solverPrivateKey(env),
    ethflow: {
      contracts: str(env, 'ETHFLOW_CONTRACTS') === null ? null : [...addressList(env, 'ETHFLOW_CONTRACTS')],
      refunderKey: solverPrivateKey(env, 'ETHFLOW_REFUNDER_KEY'),
    },
    solvers: solvers(env),
    solverEngineToken: solverEngineToken(env),
    redisUrl: url(env, 'REDIS_URL', ['redis', 'rediss']),
    redisKeyPrefix: str(env, 'REDIS_KEY_PREFIX') ?? 'batchbook:',
    amqpUrl: url(env, 'AMQP_URL', ['amqp', 'amqps']),
    logLevel: logLevel as LogLevel,
    rateLimit: {
      quote: int(env, 'RATE_LIMIT_QUOTE', 10, 0, 1_000_000),
      orders: int(env, 'RATE_LIMIT_ORDERS', 5, 0, 1_000_000),
      other: int(env, 'RATE_LIMIT_OTHER', 100, 0, 1_000_000),
    },
    defaultNetwork,
    bannedAddresses: addressList(env, 'BANNED_ADDRESSES'),
    deniedTokens: addressList(env, 'DENIED_TOKENS'),
    externalQuoteUrl: url(env, 'EXTERNAL_QUOTE_URL', ['http', 'https']),
    cms: { enabled: bool(env, 'CMS_ENABLED', true), apiKey: str(env, 'CMS_API_KEY'), baseUrl: url(env, 'CMS_BASE_URL', ['http', 'https']) },
    analyticsApiKey: str(env, 'ANALYTICS_API_KEY'),
    analyticsApiUrl: url(env, 'ANALYTICS_API_URL', ['http', 'https'])?.replace(/\/+$/, '') ?? null,
    simulation: {
      apiKey: str(env, 'SIMULATION_API_KEY'),
      projectName: str(env, 'SIMULATION_PROJECT_NAME'),
      orgName: str(env, 'SIMULATION_ORG_NAME'),
    },
    simulationRunsPerClient: int(env, 'SIMULATION_MAX_STORED_RUNS_PER_CLIENT', 100, 1, 1_000_000),
    coingeckoApiKey: str(env, 'COINGECKO_API_KEY'),
    holderApis: { moralisApiKey: str(env, 'MORALIS_API_KEY'), ethplorerApiKey: str(env, 'ETHPLORER_API_KEY'), goldRushApiKey: str(env, 'GOLDRUSH_API_KEY') },
    analyticsYieldQueryId: str(env, 'ANALYTICS_YIELD_QUERY_ID') === null ? null : int(env, 'ANALYTICS_YIELD_QUERY_ID', 0, 1, Number.MAX_SAFE_INTEGER),
    analyticsHooksQueryId: int(env, 'ANALYTICS_HOOKS_QUERY_ID', 5302473, 1, Number.MAX_SAFE_INTEGER),
    outboundTimeoutMs: int(env, 'OUTBOUND_TIMEOUT_MS', 10_000, 100, 120_000),
    exposure: {
      trustProxy: trustProxy(env),
      devnetExpose: bool(env, 'DEVNET_EXPOSE', false),
      publicUrl: url(env, 'PUBLIC_URL', ['http', 'https'])?.replace(/\/+$/, '') ?? null,
    },
    notifications: {
      confirmations: str(env, 'NOTIFY_CONFIRMATIONS') === null ? null : int(env, 'NOTIFY_CONFIRMATIONS', 0, 0, 1000),
      priceImprovementBps: int(env, 'PRICE_IMPROVEMENT_BPS', 1, 1, 10_000),
      maxAgeMs: duration(env, 'NOTIFY_MAX_AGE', 24 * 3_600_000, 1000),
      backoffBaseMs: int(env, 'NOTIFY_BACKOFF_BASE_MS', 1000, 10, 3_600_000),
      backoffCapMs: int(env, 'NOTIFY_BACKOFF_CAP_MS', 60_000, 10, 86_400_000),
      leaseMs: int(env, 'NOTIFY_LEASE_MS', 30_000, 1000, 3_600_000),
      pollIntervalMs: int(env, 'NOTIFY_POLL_INTERVAL_MS', 1000, 10, 60_000),
      concurrency: int(env, 'NOTIFY_CONCURRENCY', 8, 1, 256),
    },
    notifyChannels: notifyChannels(env),
    affiliate: affiliateConfig(env),
    fees: feesConfig(env),
  };
}

function feeSchedule(env: Env, name: string, def: string): ScheduledPolicy[] {
  const raw = str(env, name) ?? def;
  try {
    return parseFeeSchedule(raw);
  } catch (err) {
    if (err instanceof FeeScheduleError) throw new ConfigError(name, `none or comma-separated CLASS:KIND:FACTOR[:MAX_VOLUME_FACTOR] (${err.message})`, raw);
    throw err;
  }
}

function feesConfig(env: Env): FeesConfig {
  const maxRaw = str(env, 'FEE_MAX_PARTNER_FEE') ?? '0.01';
  let maxPartnerFee: number;
  try {
    maxPartnerFee = parseFeeFactor(maxRaw);
  } catch {
    throw new ConfigError('FEE_MAX_PARTNER_FEE', 'a decimal in [0, 1)', maxRaw);
  }
  const upcomingRaw = str(env, 'FEE_UPCOMING_POLICIES');
  const fromRaw = str(env, 'FEE_UPCOMING_FROM');
  if ((upcomingRaw === null) !== (fromRaw === null)) {
    throw new ConfigError(upcomingRaw === null ? 'FEE_UPCOMING_POLICIES' : 'FEE_UPCOMING_FROM', 'FEE_UPCOMING_POLICIES and FEE_UPCOMING_FROM set together', upcomingRaw ?? fromRaw ?? undefined);
  }
  let upcoming: FeesConfig['upcoming'] = null;
  if (upcomingRaw !== null && fromRaw !== null) {
    const from = Date.parse(fromRaw);
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(fromRaw) || !Number.isFinite(from)) throw new ConfigError('FEE_UPCOMING_FROM', 'an ISO-8601 UTC time such as 2026-12-01T00:00:00Z', fromRaw);
    upcoming = { policies: feeSchedule(env, 'FEE_UPCOMING_POLICIES', ''), from };
  }
  return { policies: feeSchedule(env, 'FEE_POLICIES', DEFAULT_FEE_POLICIES), maxPartnerFee, upcoming };
}

// ---- notification delivery channels (webhook, Telegram, web push, email) and the RabbitMQ queue ----

export interface NotifyChannelsConfig {
  /** NOTIFY_ALLOW_PRIVATE_TARGETS; null when unset: the composition root applies resolveAllowPrivateTargets (true on a devnet-only node) */
  allowPrivateTargets: boolean | null;
  telegram: { botToken: string | null; apiUrl: string };
  /** both keys or neither (then generated into DATA_DIR on first start) */
  vapid: { publicKey: string | null; privateKey: string | null; subject: string };
  smtp: { url: string | null; from: string | null };
  /** RabbitMQ queue of deliveries (with AMQP_URL); its dead letters go to `<name>.dead` */
  amqpQueue: string;
}

/** base64url text that decodes to exactly `bytes` bytes */
function isBase64Url(text: string, bytes: number): boolean {
  return /^[A-Za-z0-9_-]+={0,2}$/.test(text) && Buffer.from(text, 'base64url').length === bytes;
}

/** A URL of one of the schemes; the error never echoes credentials (SMTP URLs carry passwords). */
function secretUrl(env: Env, name: string, schemes: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  let ok = false;
  try {
    ok = schemes.includes(new URL(raw).protocol.replace(/:$/, ''));
  } catch {
    ok = false;
  }
  if (!ok) throw new ConfigError(name, `a URL (${schemes.join(', ')})`, raw.replace(/\/\/[^@/]*@/, '//***@'));
  return raw;
}

function notifyChannels(env: Env): NotifyChannelsConfig {
  const botToken = str(env, 'TELEGRAM_BOT_TOKEN');
  if (botToken !== null && !/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/.test(botToken)) {
    throw new ConfigError('TELEGRAM_BOT_TOKEN', 'a Bot API token like 123456789:AA... (digits, a colon, 20+ letters)', '(hidden)');
  }
  const publicKey = str(env, 'VAPID_PUBLIC_KEY');
  const privateKey = str(env, 'VAPID_PRIVATE_KEY');
  if (publicKey !== null && !(isBase64Url(publicKey, 65) && Buffer.from(publicKey, 'base64url')[0] === 4)) {
    throw new ConfigError('VAPID_PUBLIC_KEY', 'a base64url uncompressed P-256 public key (65 bytes)', publicKey);
  }
  if (privateKey !== null && !isBase64Url(privateKey, 32)) throw new ConfigError('VAPID_PRIVATE_KEY', 'a base64url P-256 private key (32 bytes)', '(hidden)');
  if ((publicKey === null) !== (privateKey === null)) {
    const missing = publicKey === null ? 'VAPID_PUBLIC_KEY' : 'VAPID_PRIVATE_KEY';
    throw new ConfigError(missing, 'set together with the other VAPID key (or neither, to generate a pair into DATA_DIR)', undefined);
  }
  const subject = str(env, 'VAPID_SUBJECT') ?? 'mailto:notifications@batchbook.invalid';
  if (!/^(mailto:[^@\s]+@[^@\s]+|https:\/\/[^\s/]+.*)$/.test(subject)) throw new ConfigError('VAPID_SUBJECT', 'a mailto: address or an https: URL', subject);
  const from = str(env, 'SMTP_FROM');
  if (from !== null && !/^(?:[^<>]*<[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+>|[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+)$/.test(from)) {
    throw new ConfigError('SMTP_FROM', "an address, or 'Name <address>'", from);
  }
  const queue = str(env, 'NOTIFY_AMQP_QUEUE') ?? 'batchbook.notifications';
  if (!/^[A-Za-z0-9._:-]{1,200}$/.test(queue)) throw new ConfigError('NOTIFY_AMQP_QUEUE', 'a queue name of letters, digits and . _ : - (at most 200)', queue);
  const allow = str(env, 'NOTIFY_ALLOW_PRIVATE_TARGETS') === null ? null : bool(env, 'NOTIFY_ALLOW_PRIVATE_TARGETS', false);
  return {
    allowPrivateTargets: allow,
    telegram: { botToken, apiUrl: (url(env, 'TELEGRAM_API_URL', ['http', 'https']) ?? 'https://api.telegram.org').replace(/\/+$/, '') },
    vapid: { publicKey, privateKey, subject },
    smtp: { url: secretUrl(env, 'SMTP_URL', ['smtp', 'smtps']), from },
    amqpQueue: queue,
  };
}


// ---- affiliate program (issue 10) ----
function affiliateConfig(env: Env): AffiliateConfig {
  const splits = {
    splitAffiliatePct: num(env, 'AFFILIATE_REVENUE_SPLIT_AFFILIATE_PCT', 50, 0, 100),
    splitTraderPct: num(env, 'AFFILIATE_REVENUE_SPLIT_TRADER_PCT', 50, 0, 100),
    splitDaoPct: num(env, 'AFFILIATE_REVENUE_SPLIT_DAO_PCT', 0, 0, 100),
  };
  const sum = splits.splitAffiliatePct + splits.splitTraderPct + splits.splitDaoPct;
  if (Math.abs(sum - 100) > 1e-9) {
    throw new ConfigError('AFFILIATE_REVENUE_SPLIT_{AFFILIATE,TRADER,DAO}_PCT', 'three percentages summing to 100', `${splits.splitAffiliatePct} + ${splits.splitTraderPct} + ${splits.splitDaoPct} = ${sum}`);
  }
  const domainName = str(env, 'AFFILIATE_DOMAIN_NAME') ?? 'CoW Swap Affiliate';
  if (domainName.length > 100) throw new ConfigError('AFFILIATE_DOMAIN_NAME', 'at most 100 characters', domainName);
  const queryId = (name: string) => (str(env, name) === null ? null : int(env, name, 0, 1, Number.MAX_SAFE_INTEGER));
  return {
    rewardAmount: num(env, 'AFFILIATE_REWARD_AMOUNT', 20, 0, 1e12),
    triggerVolume: num(env, 'AFFILIATE_TRIGGER_VOLUME', 250_000, 0.000001, 1e15),
    timeCapDays: int(env, 'AFFILIATE_TIME_CAP_DAYS', 90, 1, 36_500),
    volumeCap: num(env, 'AFFILIATE_VOLUME_CAP', 2_500_000, 0.000001, 1e15),
    ...splits,
    domainName,
    analyticsAffiliateStatsQueryId: queryId('ANALYTICS_AFFILIATE_STATS_QUERY_ID'),
    analyticsTraderStatsQueryId: queryId('ANALYTICS_TRADER_STATS_QUERY_ID'),
    chains: affiliateChains(env),
    minLiquidityUsd: num(env, 'AFFILIATE_MIN_LIQUIDITY_USD', 100_000, 0, 1e15),
    minLiquidityUsdByChain: Object.fromEntries(
      Object.keys(env)
        .map((key) => [key, /^AFFILIATE_MIN_LIQUIDITY_USD_(\d+)$/.exec(key)?.[1]] as const)
        .filter((e): e is readonly [string, string] => e[1] !== undefined)
        .map(([key, chainId]) => [Number(chainId), num(env, key, 0, 0, 1e15)]),
    ),
  };
}

function affiliateChains(env: Env): number[] | null {
  const raw = str(env, 'AFFILIATE_CHAINS');
  if (raw === null) return null;
  const ids = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (ids.length === 0 || ids.some((id) => !/^\d{1,15}$/.test(id))) throw new ConfigError('AFFILIATE_CHAINS', 'comma-separated chain ids', raw);
  return [...new Set(ids.map(Number))];
}

/** Loads `.env` from the working directory into the given env object when present (existing values win). */
export function readDotEnv(env: Env, cwd: string = process.cwd()): Env {
  const merged: Env = { ...env };
  let text: string;
  try {
    text = readFileSync(resolve(cwd, '.env'), 'utf8');
  } catch {
    return merged;
  }
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (!m || line.trim().startsWith('#')) continue;
    let value = m[2]!;
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    if (merged[m[1]!] === undefined) merged[m[1]!] = value;
  }
  return merged;
}

/**
 * For command-line entry points (`npm start`, operator scripts): the configuration from the environment and `.env`,
 * or one line on stderr naming the bad variable and exit code 2.
 */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig(readDotEnv(process.env));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
