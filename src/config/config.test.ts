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

  it('turns the devnet off when a real chain is configured, unless DEVNET=true', () => {
    assert.equal(loadConfig({ RPC_URL_1: 'https://rpc.example' }).devnet.enabled, false);
    assert.equal(loadConfig({ RPC_URL_1: 'https://rpc.example' }).rpcUrls.get(1), 'https://rpc.example');
    assert.equal(loadConfig({ RPC_URL_1: 'wss://rpc.example', DEVNET: 'true' }).devnet.enabled, true);
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
  ] as const) {
    it(`rejects ${name}=${value} with one line naming the variable`, () => {
      assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && expected.test(err.message) && !err.message.includes('\n'));
    });
  }

  it('reads the hooks analytics query id (default: the upstream query), rejecting a non-positive one', () => {
    assert.equal(loadConfig({}).analyticsHooksQueryId, 5302473);
    assert.equal(loadConfig({ ANALYTICS_HOOKS_QUERY_ID: '77' }).analyticsHooksQueryId, 77);
    assert.throws(() => loadConfig({ ANALYTICS_HOOKS_QUERY_ID: '0' }), (err: unknown) => err instanceof ConfigError && /^ANALYTICS_HOOKS_QUERY_ID: expected an integer/.test(err.message));
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
});
