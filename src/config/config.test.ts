import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, readDotEnv } from './config.js';

describe('configuration', () => {
  it('has working defaults with nothing set: devnet on, PGlite in ./.batchbook, port 8080', () => {
    const c = loadConfig({}, '/srv/app');
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.dataDir, '/srv/app/.batchbook');
    assert.equal(c.databaseUrl, null);
    assert.equal(c.devnet.enabled, true);
    assert.equal(c.devnet.blockTime, 2);
    assert.deepEqual(c.rateLimit, { quote: 10, orders: 5, other: 100 });
    assert.deepEqual(c.cms, { enabled: true, apiKey: null, baseUrl: null });
  });

  it('turns the content features off only when CMS_ENABLED=false', () => {
    assert.equal(loadConfig({ CMS_ENABLED: 'false' }).cms.enabled, false);
    assert.deepEqual(loadConfig({ CMS_BASE_URL: 'https://cms.example', CMS_API_KEY: 'k' }).cms, { enabled: true, apiKey: 'k', baseUrl: 'https://cms.example' });
  });

  it('reads SOLVER_PRIVATE_KEY as a 32-byte hex key (0x optional) and never echoes a bad one', () => {
    const key = 'ab'.repeat(32);
    assert.equal(loadConfig({}).solverPrivateKey, null);
    assert.equal(loadConfig({ SOLVER_PRIVATE_KEY: `0x${key.toUpperCase()}` }).solverPrivateKey, `0x${key}`);
    assert.equal(loadConfig({ SOLVER_PRIVATE_KEY: key }).solverPrivateKey, `0x${key}`);
    for (const bad of [`0x${key}00`, 'not-a-key-at-all', `0x${'0'.repeat(64)}`]) {
      assert.throws(() => loadConfig({ SOLVER_PRIVATE_KEY: bad }), (err: unknown) => err instanceof ConfigError && /^SOLVER_PRIVATE_KEY: expected a 32-byte hex private key .*, got '\(hidden\)'$/.test(err.message) && !err.message.includes(bad));
    }
  });

  it('reads ETHFLOW_CONTRACTS (unset: production\'s) and ETHFLOW_REFUNDER_KEY (never echoed)', () => {
    assert.deepEqual(loadConfig({}).ethflow, { contracts: null, refunderKey: null });
    const a = '0xBA3CB449BD2B4ADDDBC894D8697F5170800EADEC';
    assert.deepEqual(loadConfig({ ETHFLOW_CONTRACTS: `${a}, 0x04501b9b1d52e67f6862d157e00d13419d2d6e95` }).ethflow.contracts, [a.toLowerCase(), '0x04501b9b1d52e67f6862d157e00d13419d2d6e95']);
    assert.throws(() => loadConfig({ ETHFLOW_CONTRACTS: '0x1234' }), (err: unknown) => err instanceof ConfigError && /^ETHFLOW_CONTRACTS: expected a comma-separated list of 0x addresses/.test(err.message));
    assert.equal(loadConfig({ ETHFLOW_REFUNDER_KEY: 'cd'.repeat(32) }).ethflow.refunderKey, `0x${'cd'.repeat(32)}`);
    assert.throws(() => loadConfig({ ETHFLOW_REFUNDER_KEY: 'nope' }), (err: unknown) => err instanceof ConfigError && /^ETHFLOW_REFUNDER_KEY: .*'\(hidden\)'$/.test(err.message));
  });

  it('reads fork mode (FORK_URL, FORK_BLOCK, FORK_TOKENS), off by default, and never echoes the URL', () => {
    assert.equal(loadConfig({}).fork, null);
    const url = 'https://eth.example/v3/sk-secret-key';
    const c = loadConfig({ FORK_URL: url, FORK_BLOCK: '19000000', FORK_TOKENS: '0x6B175474E89094C44Da98b954EedeAC495271d0F, 0xdAC17F958D2ee523a2206206994597C13D831ec7' });
    assert.deepEqual(c.fork, { url, block: 19000000, tokens: ['0x6b175474e89094c44da98b954eedeac495271d0f', '0xdac17f958d2ee523a2206206994597c13d831ec7'] });
    assert.equal(c.devnet.enabled, true, 'the fork runs in the embedded anvil');
    assert.equal(loadConfig({ FORK_URL: url }).fork?.block, null);
    assert.throws(() => loadConfig({ FORK_URL: 'ftp://sk-secret-key@eth.example' }), (err: unknown) => err instanceof ConfigError && /^FORK_URL: expected a JSON-RPC URL .*, got '\(hidden\)'$/.test(err.message) && !err.message.includes('sk-secret-key'));
    assert.throws(() => loadConfig({ FORK_URL: url, FORK_BLOCK: 'latest' }), (err: unknown) => err instanceof ConfigError && /^FORK_BLOCK: expected a block number/.test(err.message));
    assert.throws(() => loadConfig({ FORK_BLOCK: '1' }), (err: unknown) => err instanceof ConfigError && /^FORK_BLOCK: expected FORK_URL to be set as well/.test(err.message));
    assert.throws(() => loadConfig({ FORK_URL: url, DETERMINISTIC: 'true' }), (err: unknown) => err instanceof ConfigError && /^DETERMINISTIC: expected false with FORK_URL/.test(err.message));
    assert.throws(() => loadConfig({ FORK_URL: url, DEVNET: 'false' }), (err: unknown) => err instanceof ConfigError && /^DEVNET: expected true or unset with FORK_URL/.test(err.message));
  });

  it('turns the devnet off when a real chain is configured, unless DEVNET=true', () => {
    assert.equal(loadConfig({ RPC_URL_1: 'https://rpc.example' }).devnet.enabled, false);
    assert.equal(loadConfig({ RPC_URL_1: 'https://rpc.example' }).rpcUrls.get(1), 'https://rpc.example');
    assert.equal(loadConfig({ RPC_URL_1: 'wss://rpc.example', DEVNET: 'true' }).devnet.enabled, true);
  });

  it('DETERMINISTIC=true turns the market bot and the history off, whatever else is set', () => {
    assert.equal(loadConfig({}).deterministic, false);
    const config = loadConfig({ DETERMINISTIC: 'true', DEVNET_ACTIVITY: 'true', DEVNET_HISTORY_HOURS: '24' });
    assert.equal(config.deterministic, true);
    assert.equal(config.devnet.activity, false);
    assert.equal(config.devnet.historyHours, 0);
    assert.throws(() => loadConfig({ DETERMINISTIC: 'maybe' }), /^ConfigError: DETERMINISTIC: expected true or false, got 'maybe'$/);
  });

  for (const [name, value, expected] of [
    ['PORT', 'abc', /^PORT: expected an integer from 0 to 65535, got 'abc'$/],
    ['PORT', '70000', /^PORT: expected an integer/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL: expected a URL \(postgres, postgresql\)/],
    ['REDIS_URL', 'not a url', /^REDIS_URL: expected a URL/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL: expected fatal \| error/],
    ['DEVNET', 'maybe', /^DEVNET: expected true or false, got 'maybe'$/],
    ['DEVNET_BLOCK_TIME', '-1', /^DEVNET_BLOCK_TIME: expected a number/],
    ['RPC_URL_abc', 'http://x', /^RPC_URL_abc: expected RPC_URL_<numeric chain id>/],
    ['RPC_URL_31337', 'http://x', /^RPC_URL_31337: expected a chain id other than 31337/],
    ['CMS_BASE_URL', 'ftp://cms', /^CMS_BASE_URL: expected a URL \(http, https\)/],
    ['BANNED_ADDRESSES', '0x12', /^BANNED_ADDRESSES: expected a comma-separated list of 0x addresses, got '0x12'$/],
    ['TRUST_PROXY', 'yes', /^TRUST_PROXY: expected a hop count or a comma-separated list of proxy IP addresses\/CIDRs/],
    ['TRUST_PROXY', '10.0.0.0/33', /^TRUST_PROXY: expected a hop count/],
    ['DEVNET_EXPOSE', 'sometimes', /^DEVNET_EXPOSE: expected true or false/],
    ['PUBLIC_URL', 'ftp://x', /^PUBLIC_URL: expected a URL \(http, https\)/],
  ] as const) {
    it(`rejects ${name}=${value} with one line naming the variable`, () => {
      assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && expected.test(err.message) && !err.message.includes('\n'));
    });
  }

  it('reads the exposure settings: TRUST_PROXY as hops or CIDRs, DEVNET_EXPOSE, PUBLIC_URL without a trailing slash', () => {
    assert.deepEqual(loadConfig({}).exposure, { trustProxy: false, devnetExpose: false, publicUrl: null });
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).exposure.trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '127.0.0.1/32,10.0.0.0/8' }).exposure.trustProxy, ['127.0.0.1/32', '10.0.0.0/8']);
    assert.equal(loadConfig({ DEVNET_EXPOSE: 'true' }).exposure.devnetExpose, true);
    assert.equal(loadConfig({ PUBLIC_URL: 'https://bb.example/' }).exposure.publicUrl, 'https://bb.example');
  });

  it('reads the hooks analytics query id (default: the upstream query), rejecting a non-positive one', () => {
    assert.equal(loadConfig({}).analyticsHooksQueryId, 5302473);
    assert.equal(loadConfig({ ANALYTICS_HOOKS_QUERY_ID: '77' }).analyticsHooksQueryId, 77);
    assert.throws(() => loadConfig({ ANALYTICS_HOOKS_QUERY_ID: '0' }), (err: unknown) => err instanceof ConfigError && /^ANALYTICS_HOOKS_QUERY_ID: expected an integer/.test(err.message));
  });

  it('reads the analytics provider base URL (ANALYTICS_API_URL, default unset: its public API), rejecting a non-HTTP one', () => {
    assert.equal(loadConfig({}).analyticsApiUrl, null);
    assert.equal(loadConfig({ ANALYTICS_API_URL: 'http://127.0.0.1:9999/' }).analyticsApiUrl, 'http://127.0.0.1:9999');
    assert.throws(() => loadConfig({ ANALYTICS_API_URL: 'ftp://x' }), (err: unknown) => err instanceof ConfigError && /^ANALYTICS_API_URL:/.test(err.message));
  });

  it('reads the stored simulation runs kept per client (default 100), rejecting zero', () => {
    assert.equal(loadConfig({}).simulationRunsPerClient, 100);
    assert.equal(loadConfig({ SIMULATION_MAX_STORED_RUNS_PER_CLIENT: '5' }).simulationRunsPerClient, 5);
    assert.throws(() => loadConfig({ SIMULATION_MAX_STORED_RUNS_PER_CLIENT: '0' }), (err: unknown) => err instanceof ConfigError && /^SIMULATION_MAX_STORED_RUNS_PER_CLIENT: expected an integer/.test(err.message));
  });

  it('reads .env, with the real environment winning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bb-env-'));
    try {
      writeFileSync(join(dir, '.env'), '# comment\nPORT=9999\nexport HOST="0.0.0.0"\nLOG_LEVEL=debug\n');
      const env = readDotEnv({ LOG_LEVEL: 'warn' }, dir);
      const c = loadConfig(env, dir);
      assert.equal(c.port, 9999);
      assert.equal(c.host, '0.0.0.0');
      assert.equal(c.logLevel, 'warn');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('normalises banned addresses to lowercase', () => {
    const c = loadConfig({ BANNED_ADDRESSES: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01, 0x0000000000000000000000000000000000000001' });
    assert.ok(c.bannedAddresses.has('0xabcdef0123456789abcdef0123456789abcdef01'));
    assert.equal(c.bannedAddresses.size, 2);
  });

  // ---- affiliate program (issue 10) ----
  it('has affiliate defaults whose splits sum to 100, and reads every AFFILIATE_* variable', () => {
    const d = loadConfig({}).affiliate;
    assert.equal(d.splitAffiliatePct + d.splitTraderPct + d.splitDaoPct, 100);
    assert.equal(d.domainName, 'CoW Swap Affiliate');
    assert.equal(d.analyticsAffiliateStatsQueryId, null);
    const c = loadConfig({
      AFFILIATE_REWARD_AMOUNT: '10', AFFILIATE_TRIGGER_VOLUME: '1000', AFFILIATE_TIME_CAP_DAYS: '30', AFFILIATE_VOLUME_CAP: '5000',
      AFFILIATE_REVENUE_SPLIT_AFFILIATE_PCT: '40', AFFILIATE_REVENUE_SPLIT_TRADER_PCT: '35', AFFILIATE_REVENUE_SPLIT_DAO_PCT: '25',
      AFFILIATE_DOMAIN_NAME: 'Batchbook Affiliate', ANALYTICS_AFFILIATE_STATS_QUERY_ID: '7', ANALYTICS_TRADER_STATS_QUERY_ID: '8',
      AFFILIATE_CHAINS: '1, 100,1', AFFILIATE_MIN_LIQUIDITY_USD: '250000', AFFILIATE_MIN_LIQUIDITY_USD_100: '20000',
    }).affiliate;
    assert.deepEqual(c, {
      rewardAmount: 10, triggerVolume: 1000, timeCapDays: 30, volumeCap: 5000, splitAffiliatePct: 40, splitTraderPct: 35, splitDaoPct: 25,
      domainName: 'Batchbook Affiliate', analyticsAffiliateStatsQueryId: 7, analyticsTraderStatsQueryId: 8,
      chains: [1, 100], minLiquidityUsd: 250_000, minLiquidityUsdByChain: { 100: 20_000 },
    });
    assert.deepEqual([d.chains, d.minLiquidityUsd, d.minLiquidityUsdByChain], [null, 100_000, {}], 'default: the real chains served (the devnet alone), a $100k floor');
  });

  for (const [env, expected] of [
    [{ AFFILIATE_REVENUE_SPLIT_DAO_PCT: '10' }, /^AFFILIATE_REVENUE_SPLIT_\{AFFILIATE,TRADER,DAO\}_PCT: expected three percentages summing to 100, got '50 \+ 50 \+ 10 = 110'$/],
    [{ AFFILIATE_REVENUE_SPLIT_TRADER_PCT: '101' }, /^AFFILIATE_REVENUE_SPLIT_TRADER_PCT: expected a number from 0 to 100/],
    [{ AFFILIATE_TRIGGER_VOLUME: '0' }, /^AFFILIATE_TRIGGER_VOLUME: expected a number/],
    [{ AFFILIATE_TIME_CAP_DAYS: '1.5' }, /^AFFILIATE_TIME_CAP_DAYS: expected an integer/],
    [{ AFFILIATE_REWARD_AMOUNT: '-1' }, /^AFFILIATE_REWARD_AMOUNT: expected a number/],
    [{ AFFILIATE_VOLUME_CAP: 'lots' }, /^AFFILIATE_VOLUME_CAP: expected a number/],
    [{ ANALYTICS_TRADER_STATS_QUERY_ID: 'x' }, /^ANALYTICS_TRADER_STATS_QUERY_ID: expected an integer/],
    [{ AFFILIATE_CHAINS: 'mainnet' }, /^AFFILIATE_CHAINS: expected comma-separated chain ids/],
    [{ AFFILIATE_MIN_LIQUIDITY_USD_1: '-5' }, /^AFFILIATE_MIN_LIQUIDITY_USD_1: expected a number/],
  ] as const) {
    it(`rejects ${JSON.stringify(env)} with one line naming the variable`, () => {
      assert.throws(() => loadConfig(env), (err: unknown) => err instanceof ConfigError && expected.test(err.message) && !err.message.includes('\n'));
    });
  }
  it('SOLVERS: built-ins by name, external engines as name=url, unset is both built-ins; SOLVER_TIME_LIMIT_MS', () => {
    assert.deepEqual(loadConfig({}).solvers, { engines: [], timeLimitMs: 2000 });
    const c = loadConfig({ SOLVERS: ' mine=http://127.0.0.1:9000/ , cow-matcher,amm-router', SOLVER_TIME_LIMIT_MS: '500' }).solvers;
    assert.deepEqual(c.engines, [{ name: 'mine', url: 'http://127.0.0.1:9000' }, { name: 'cow-matcher', url: null }, { name: 'amm-router', url: null }]);
    assert.equal(c.timeLimitMs, 500);
    assert.throws(() => loadConfig({ SOLVERS: 'baseline' }), /^ConfigError: SOLVERS: expected a comma-separated list of name=http\(s\):\/\/url or built-in names/);
    assert.throws(() => loadConfig({ SOLVERS: 'mine=ftp://x' }), /SOLVERS/);
    assert.throws(() => loadConfig({ SOLVERS: 'cow-matcher,cow-matcher' }), /each name once/);
    assert.throws(() => loadConfig({ SOLVER_TIME_LIMIT_MS: '10' }), /SOLVER_TIME_LIMIT_MS: expected an integer from 100 to 60000/);
  });

  it('SOLVERS: plain http only for engines on loopback, https elsewhere (issue 19)', () => {
    for (const url of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://[::1]:9000', 'https://engine.example.org', 'https://10.0.0.5:9000']) {
      assert.equal(loadConfig({ SOLVERS: `mine=${url}` }).solvers.engines[0]!.url, url);
    }
    for (const url of ['http://engine.example.org', 'http://10.0.0.5:9000', 'http://127.0.0.1.example.org', 'http://[::ffff:7f00:1]']) {
      assert.throws(() => loadConfig({ SOLVERS: `mine=${url}` }), /^ConfigError: SOLVERS: expected .*https for engines not on loopback/, url);
    }
  });

  it('SOLVER_ENGINE_TOKEN: unset serves no engine routes; a short or spaced token is refused and never echoed', () => {
    assert.equal(loadConfig({}).solverEngineToken, null);
    assert.equal(loadConfig({ SOLVER_ENGINE_TOKEN: ' 0123456789abcdef-token ' }).solverEngineToken, '0123456789abcdef-token');
    for (const bad of ['short-token', 'has a space in the middle']) {
      assert.throws(() => loadConfig({ SOLVER_ENGINE_TOKEN: bad }), (err: unknown) => err instanceof ConfigError && /^SOLVER_ENGINE_TOKEN: expected 16 to 512 printable/.test(err.message) && !err.message.includes(bad));
    }
  });

  it('notifications: defaults, durations, and one-line errors', () => {
    const d = loadConfig({}).notifications;
    assert.deepEqual(d, { confirmations: null, priceImprovementBps: 1, maxAgeMs: 86_400_000, backoffBaseMs: 1000, backoffCapMs: 60_000, leaseMs: 30_000, pollIntervalMs: 1000, concurrency: 8 });
    const c = loadConfig({ NOTIFY_CONFIRMATIONS: '0', NOTIFY_MAX_AGE: '90s', PRICE_IMPROVEMENT_BPS: '25', NOTIFY_BACKOFF_CAP_MS: '200' }).notifications;
    assert.equal(c.confirmations, 0);
    assert.equal(c.maxAgeMs, 90_000);
    assert.equal(c.priceImprovementBps, 25);
    assert.equal(c.backoffCapMs, 200);
    assert.equal(loadConfig({ NOTIFY_MAX_AGE: '3600' }).notifications.maxAgeMs, 3_600_000);
    assert.equal(loadConfig({ NOTIFY_MAX_AGE: '2d' }).notifications.maxAgeMs, 2 * 86_400_000);
    assert.throws(() => loadConfig({ NOTIFY_MAX_AGE: 'a day' }), /^ConfigError: NOTIFY_MAX_AGE: expected a duration of at least 1000 ms such as 90s, 15m, 24h or 1d, got 'a day'$/);
    assert.throws(() => loadConfig({ NOTIFY_CONFIRMATIONS: '-1' }), /NOTIFY_CONFIRMATIONS: expected an integer from 0 to 1000/);
    assert.throws(() => loadConfig({ PRICE_IMPROVEMENT_BPS: '0' }), /PRICE_IMPROVEMENT_BPS: expected an integer from 1 to 10000/);
    assert.throws(() => loadConfig({ NOTIFY_CONCURRENCY: 'many' }), /NOTIFY_CONCURRENCY: expected an integer/);
  });
});

describe('configuration: notification channels', () => {
  const VAPID_PUBLIC = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url');
  const VAPID_PRIVATE = Buffer.alloc(32, 9).toString('base64url');

  it('defaults: private targets decided by the composition root, official Telegram API, no SMTP, generated VAPID keys', () => {
    assert.deepEqual(loadConfig({}).notifyChannels, {
      allowPrivateTargets: null,
      telegram: { botToken: null, apiUrl: 'https://api.telegram.org' },
      vapid: { publicKey: null, privateKey: null, subject: 'mailto:notifications@batchbook.invalid' },
      smtp: { url: null, from: null },
      amqpQueue: 'batchbook.notifications',
    });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      NOTIFY_ALLOW_PRIVATE_TARGETS: 'false',
      TELEGRAM_BOT_TOKEN: '123456789:AAE-abcdefghijklmnopqrstuvwxyz_12',
      TELEGRAM_API_URL: 'http://127.0.0.1:9999/',
      VAPID_PUBLIC_KEY: VAPID_PUBLIC,
      VAPID_PRIVATE_KEY: VAPID_PRIVATE,
      VAPID_SUBJECT: 'https://batchbook.example/contact',
      SMTP_URL: 'smtps://user:pw@mail.example:465',
      SMTP_FROM: 'batchbook <alerts@batchbook.example>',
      NOTIFY_AMQP_QUEUE: 'bb.deliveries',
    }).notifyChannels;
    assert.equal(c.allowPrivateTargets, false);
    assert.deepEqual(c.telegram, { botToken: '123456789:AAE-abcdefghijklmnopqrstuvwxyz_12', apiUrl: 'http://127.0.0.1:9999' });
    assert.deepEqual(c.vapid, { publicKey: VAPID_PUBLIC, privateKey: VAPID_PRIVATE, subject: 'https://batchbook.example/contact' });
    assert.deepEqual(c.smtp, { url: 'smtps://user:pw@mail.example:465', from: 'batchbook <alerts@batchbook.example>' });
    assert.equal(c.amqpQueue, 'bb.deliveries');
    assert.equal(loadConfig({ NOTIFY_ALLOW_PRIVATE_TARGETS: 'true' }).notifyChannels.allowPrivateTargets, true);
  });

  for (const [env, expected] of [
    [{ NOTIFY_ALLOW_PRIVATE_TARGETS: 'sometimes' }, /^NOTIFY_ALLOW_PRIVATE_TARGETS: expected true or false/],
    [{ TELEGRAM_BOT_TOKEN: 'secret-but-wrong' }, /^TELEGRAM_BOT_TOKEN: expected a Bot API token .*, got '\(hidden\)'$/],
    [{ TELEGRAM_API_URL: 'api.telegram.org' }, /^TELEGRAM_API_URL: expected a URL \(http, https\)/],
    [{ VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: VAPID_PRIVATE }, /^VAPID_PUBLIC_KEY: expected a base64url uncompressed P-256 public key/],
    [{ VAPID_PUBLIC_KEY: VAPID_PUBLIC, VAPID_PRIVATE_KEY: 'short' }, /^VAPID_PRIVATE_KEY: expected a base64url P-256 private key \(32 bytes\), got '\(hidden\)'$/],
    [{ VAPID_PUBLIC_KEY: VAPID_PUBLIC }, /^VAPID_PRIVATE_KEY: expected set together with the other VAPID key/],
    [{ VAPID_PRIVATE_KEY: VAPID_PRIVATE }, /^VAPID_PUBLIC_KEY: expected set together/],
    [{ VAPID_SUBJECT: 'http://insecure.example' }, /^VAPID_SUBJECT: expected a mailto: address or an https: URL/],
    [{ SMTP_URL: 'http://user:pw@mail.example' }, /^SMTP_URL: expected a URL \(smtp, smtps\), got 'http:\/\/\*\*\*@mail\.example'$/],
    [{ SMTP_FROM: 'not an address' }, /^SMTP_FROM: expected an address, or 'Name <address>'/],
    [{ NOTIFY_AMQP_QUEUE: 'has spaces' }, /^NOTIFY_AMQP_QUEUE: expected a queue name/],
  ] as Array<[Record<string, string>, RegExp]>) {
    it(`rejects ${Object.keys(env).join(' + ')} = ${Object.values(env)[0]} with one line naming the variable`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && expected.test(e.message) && !e.message.includes('secret-but-wrong') && !e.message.includes(':pw@'));
    });
  }
});

describe('configuration: fees (issue 23)', () => {
  it("defaults to production's documented schedule and a 1 % partner cap", () => {
    const { fees } = loadConfig({});
    assert.deepEqual(fees.policies, [
      { orderClass: 'limit', policy: { kind: 'surplus', factor: 0.5, maxVolumeFactor: 0.0098 } },
      { orderClass: 'market', policy: { kind: 'priceImprovement', factor: 0.5, maxVolumeFactor: 0.0098 } },
      { orderClass: 'any', policy: { kind: 'volume', factor: 0.0002 } },
    ]);
    assert.equal(fees.maxPartnerFee, 0.01);
    assert.equal(fees.upcoming, null);
  });

  it('reads none, other schedules and an upcoming schedule with its start', () => {
    assert.deepEqual(loadConfig({ FEE_POLICIES: 'none' }).fees.policies, []);
    const c = loadConfig({ FEE_POLICIES: 'any:volume:0.001', FEE_UPCOMING_POLICIES: 'any:volume:0.003', FEE_UPCOMING_FROM: '2026-12-01T00:00:00Z', FEE_MAX_PARTNER_FEE: '0.02' }).fees;
    assert.deepEqual(c.upcoming, { policies: [{ orderClass: 'any', policy: { kind: 'volume', factor: 0.003 } }], from: Date.parse('2026-12-01T00:00:00Z') });
    assert.equal(c.maxPartnerFee, 0.02);
  });

  for (const [env, expected] of [
    [{ FEE_POLICIES: 'any:volume:1' }, /^FEE_POLICIES: expected none or comma-separated CLASS:KIND:FACTOR.*\[0, 1\)/],
    [{ FEE_POLICIES: 'limit:surplus:0.5' }, /^FEE_POLICIES: expected .*max volume factor/],
    [{ FEE_MAX_PARTNER_FEE: '-0.1' }, /^FEE_MAX_PARTNER_FEE: expected a decimal in \[0, 1\)/],
    [{ FEE_UPCOMING_POLICIES: 'none' }, /^FEE_UPCOMING_FROM: expected FEE_UPCOMING_POLICIES and FEE_UPCOMING_FROM set together/],
    [{ FEE_UPCOMING_POLICIES: 'none', FEE_UPCOMING_FROM: 'tomorrow' }, /^FEE_UPCOMING_FROM: expected an ISO-8601 UTC time/],
  ] as const) {
    it(`rejects ${JSON.stringify(env)} with one line naming the variable`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && expected.test(e.message) && !e.message.includes('\n'));
    });
  }
});
