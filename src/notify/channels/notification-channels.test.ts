/**
 * The channels as the composition root builds them from a loaded configuration: a zero-config devnet node
 * accepts loopback webhooks and web push needs no configuration; Telegram and email name their variable; a node
 * serving a real chain refuses private targets unless configured otherwise.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/config.js';
import { buildNotificationChannels } from './notification-channels.js';

describe('notification channels from the configuration', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'batchbook-channels-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('zero-config devnet: all four channels, loopback webhooks accepted, Telegram and email name their variable', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const channels = await buildNotificationChannels(config.notifyChannels, { dataDir: config.dataDir, devnetOnly: config.rpcUrls.size === 0 });
    assert.deepEqual([...channels.keys()], ['webhook', 'telegram', 'webpush', 'email']);
    assert.deepEqual([...channels.values()].map((c) => c.missingConfiguration()), [null, 'TELEGRAM_BOT_TOKEN', null, 'SMTP_URL']);
    assert.equal(await channels.get('webhook').validateTarget('http://127.0.0.1:9999/hook'), null);
    assert.equal(channels.get('webpush').vapidPublicKey().length, 87);
  });

  it('a node serving a real chain refuses loopback targets unless NOTIFY_ALLOW_PRIVATE_TARGETS=true', async () => {
    const real = loadConfig({ DATA_DIR: dataDir, RPC_URL_1: 'https://rpc.example' });
    const strict = await buildNotificationChannels(real.notifyChannels, { dataDir: real.dataDir, devnetOnly: real.rpcUrls.size === 0 });
    assert.match((await strict.get('webhook').validateTarget('http://127.0.0.1:9999/hook'))!, /not a public address/);
    const allowed = loadConfig({ DATA_DIR: dataDir, RPC_URL_1: 'https://rpc.example', NOTIFY_ALLOW_PRIVATE_TARGETS: 'true' });
    const lax = await buildNotificationChannels(allowed.notifyChannels, { dataDir: allowed.dataDir, devnetOnly: false });
    assert.equal(await lax.get('webhook').validateTarget('http://127.0.0.1:9999/hook'), null);
    const noDevnetPrivate = loadConfig({ DATA_DIR: dataDir, NOTIFY_ALLOW_PRIVATE_TARGETS: 'false' });
    const devStrict = await buildNotificationChannels(noDevnetPrivate.notifyChannels, { dataDir, devnetOnly: true });
    assert.match((await devStrict.get('webhook').validateTarget('http://127.0.0.1:9999/hook'))!, /not a public address/);
  });

  it('configured Telegram and SMTP make those channels usable', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, TELEGRAM_BOT_TOKEN: '123:AAAAAAAAAAAAAAAAAAAAAAAA', SMTP_URL: 'smtp://127.0.0.1:2525', SMTP_FROM: 'a@batchbook.example' });
    const channels = await buildNotificationChannels(config.notifyChannels, { dataDir, devnetOnly: true });
    assert.deepEqual([...channels.values()].map((c) => c.missingConfiguration()), [null, null, null, null]);
  });
});
