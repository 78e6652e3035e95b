import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestPostgres } from '../../test/fixtures/databases.js';
import { skipUnless } from '../../test/fixtures/required-services.js';
import { runAsLeader } from './leadership.js';

const quiet = { info: () => {}, warn: () => {} };
const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

describe('leadership across replicas (PostgreSQL advisory lock)', { skip: await skipUnless('postgres') }, () => {
  it('exactly one of two replicas leads; when it stops, the other takes over', async () => {
    const server = await createTestPostgres();
    try {
      const leading = new Set<string>();
      const start = (id: string, outer: AbortController) =>
        runAsLeader({ url: server.url, name: 'test-loops', logger: quiet, signal: outer.signal, retryMs: 100 }, async (signal) => {
          leading.add(id);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          leading.delete(id);
        });
      const a = new AbortController();
      const b = new AbortController();
      const ra = start('a', a);
      assert.ok(await until(() => leading.has('a')));
      const rb = start('b', b);
      await new Promise((r) => setTimeout(r, 400));
      assert.deepEqual([...leading], ['a'], 'b stands by while a leads');
      a.abort();
      await ra;
      assert.ok(await until(() => leading.has('b')), 'b takes over');
      assert.deepEqual([...leading], ['b']);
      b.abort();
      await rb;
      assert.equal(leading.size, 0);
    } finally {
      await server.drop();
    }
  });

  it('an embedded database always leads', async () => {
    const c = new AbortController();
    let ran = false;
    await runAsLeader({ url: null, name: 'x', logger: quiet, signal: c.signal }, async () => {
      ran = true;
    });
    assert.equal(ran, true);
  });
});
