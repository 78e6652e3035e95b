/**
 * Configuration: read once from the environment (and an optional `.env` file) at start, validated, typed.
 * Nothing else in the code base reads `process.env`.
 *
 * @example
 *   const config = loadConfig(process.env); // throws ConfigError('PORT: expected ...')
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface RateLimitConfig {
  /** requests per second per client for POST /quote; 0 disables */
  quote: number;
  /** requests per second per client for order submission and cancellation; 0 disables */
  orders: number;
  /** requests per second per client for every other route; 0 disables */
  other: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** chain id → RPC URL (http(s) or ws(s)) */
  rpcUrls: Map<number, string>;
  devnet: { enabled: boolean; port: number; blockTime: number; activity: boolean; historyHours: number };
  /** build auctions and settle them with the built-in solvers (the devnet's solver account) */
  auctions: { enabled: boolean; everyBlocks: number };
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
  simulation: { apiKey: string | null; projectName: string | null; orgName: string | null };
  coingeckoApiKey: string | null;
  /** optional holder APIs for topHolders (first-party indexed holders come first where exact) */
  holderApis: { moralisApiKey: string | null; ethplorerApiKey: string | null; goldRushApiKey: string | null };
  /** saved analytics query whose rows are pools (needs ANALYTICS_API_KEY) */
  analyticsYieldQueryId: number | null;
  /** saved analytics query GET /hooks runs for reference networks we do not serve (needs ANALYTICS_API_KEY) */
  analyticsHooksQueryId: number;
  /** timeout applied to every outbound HTTP/RPC call, ms */
  outboundTimeoutMs: number;
}

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

  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host,
    dataDir: resolve(cwd, str(env, 'DATA_DIR') ?? './.batchbook'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres', 'postgresql']),
    rpcUrls,
    devnet: {
      enabled: bool(env, 'DEVNET', rpcUrls.size === 0),
      port: int(env, 'DEVNET_PORT', 8545, 0, 65535),
      blockTime: num(env, 'DEVNET_BLOCK_TIME', 2, 0.1, 3600),
      activity: bool(env, 'DEVNET_ACTIVITY', true),
      historyHours: int(env, 'DEVNET_HISTORY_HOURS', 24, 0, 168),
    },
    auctions: { enabled: bool(env, 'AUCTIONS', true), everyBlocks: int(env, 'AUCTION_EVERY_BLOCKS', 1, 1, 1000) },
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
    simulation: {
      apiKey: str(env, 'SIMULATION_API_KEY'),
      projectName: str(env, 'SIMULATION_PROJECT_NAME'),
      orgName: str(env, 'SIMULATION_ORG_NAME'),
    },
    coingeckoApiKey: str(env, 'COINGECKO_API_KEY'),
    holderApis: { moralisApiKey: str(env, 'MORALIS_API_KEY'), ethplorerApiKey: str(env, 'ETHPLORER_API_KEY'), goldRushApiKey: str(env, 'GOLDRUSH_API_KEY') },
    analyticsYieldQueryId: str(env, 'ANALYTICS_YIELD_QUERY_ID') === null ? null : int(env, 'ANALYTICS_YIELD_QUERY_ID', 0, 1, Number.MAX_SAFE_INTEGER),
    analyticsHooksQueryId: int(env, 'ANALYTICS_HOOKS_QUERY_ID', 5302473, 1, Number.MAX_SAFE_INTEGER),
    outboundTimeoutMs: int(env, 'OUTBOUND_TIMEOUT_MS', 10_000, 100, 120_000),
  };
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
