/**
 * Shutdown order on the devnet: `close()` stops the HTTP server, then the background loops, and the chain last.
 * The chain must still answer while the loops finish (their last reads, and the requests being drained, reach a
 * live node): a chain stopped first leaves them retrying a dead node until the shutdown's deadline (seen in CI as
 * "shutdown took longer than 8 s").
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { startApp } from '../src/app.js';
import { findFreePort } from '../src/chain/devnet/index.js';

describe('shutdown', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bb-shutdown-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('stops the loops while the chain still answers, then the database, then the chain', async () => {
    const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, DEVNET_PORT: String(await findFreePort()), DEVNET_BLOCK_TIME: '1', DEVNET_ACTIVITY: 'false', DEVNET_HISTORY_HOURS: '0', LOG_LEVEL: 'debug' });
    let rpcUrl = '';
    let anvilExited = false;
    /** at each step's end: was the chain still running, and did it answer (an RPC sent right then) */
    const steps: Array<{ step: string; anvilRunning: boolean; answered: Promise<boolean> }> = [];
    const blockNumber = async (): Promise<boolean> => {
      try {
        const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }), signal: AbortSignal.timeout(5_000) });
        return typeof ((await res.json()) as { result?: string }).result === 'string';
      } catch {
        return false;
      }
    };
    const lines = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) {
          const step = /shutdown: stopped the (.+) in \d+ ms/.exec(line)?.[1];
          if (step) steps.push({ step, anvilRunning: !anvilExited, answered: blockNumber() });
        }
        done();
      },
    });
    const app = await startApp(config, pino({ level: 'debug' }, lines));
    rpcUrl = app.devnet!.rpcUrl;
    void app.devnet!.exited.then(() => (anvilExited = true));
    assert.equal(await blockNumber(), true);

    await app.close();
    const order = steps.map((s) => s.step);
    assert.ok(order.includes('background loops') && order.includes('database'), order.join(', '));
    assert.ok(order.indexOf('background loops') < order.indexOf('database'), order.join(', '));
    assert.equal(order.at(-1), 'devnet', 'the chain is stopped last');
    const loops = steps.find((s) => s.step === 'background loops')!;
    assert.equal(loops.anvilRunning, true, 'the chain runs while the loops stop');
    assert.equal(await loops.answered, true, 'and answers');
    const database = steps.find((s) => s.step === 'database')!;
    assert.equal(database.anvilRunning, true, 'the chain outlives the database');
    assert.equal(anvilExited, true, 'close() stopped the chain');
  });
});
