import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { AnvilStartError, findFreePort, resolveAnvilBinary, startAnvil } from './anvil-process.js';
import { startDevnet } from './index.js';
import { startMarketBot } from './market-bot.js';
import { createDevnetRpc, RpcError } from './rpc.js';

/** the request found no server (a transport failure, not an HTTP or JSON-RPC error answer) */
const noAnswer = (err: unknown) => err instanceof RpcError && err.code === undefined && /request to \S+ failed: /.test(err.message);

describe('anvil process', () => {
  it('starts chain 31337 on the given port and stops on SIGTERM with code 0 (idempotent)', async () => {
    const port = await findFreePort();
    const anvil = await startAnvil({ port });
    assert.equal(anvil.rpcUrl, `http://127.0.0.1:${port}`);
    assert.equal(await createDevnetRpc(anvil.rpcUrl).request('eth_chainId'), '0x7a69');
    const [a, b] = await Promise.all([anvil.stop(), anvil.stop()]);
    assert.deepEqual(a, { code: 0, signal: null });
    assert.deepEqual(b, a);
    assert.deepEqual(await anvil.exited, a);
    await assert.rejects(createDevnetRpc(anvil.rpcUrl).request('eth_chainId'), noAnswer, 'nothing listens any more');
  });

  it('killing anvil resolves `exited`', async () => {
    const anvil = await startAnvil({ port: await findFreePort() });
    process.kill(anvil.pid, 'SIGKILL');
    const exit = await anvil.exited;
    assert.equal(exit.signal, 'SIGKILL');
    assert.deepEqual(await anvil.stop(), exit);
  });

  it('refuses a port in use, with a clear error', async () => {
    const server = createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    try {
      await assert.rejects(startAnvil({ port }), (err: unknown) => {
        assert.ok(err instanceof AnvilStartError);
        assert.equal(err.reason, 'port-in-use');
        assert.match(err.message, new RegExp(`port ${port}`));
        return true;
      });
    } finally {
      server.close();
    }
  });

  it('reports an early exit with anvil\'s own output', async () => {
    await assert.rejects(startAnvil({ port: await findFreePort(), extraArgs: ['--no-such-flag'] }), (err: unknown) => {
      assert.ok(err instanceof AnvilStartError);
      assert.equal(err.reason, 'exited');
      assert.match(err.message, /exited before it was ready.*no-such-flag/s);
      return true;
    });
  });

  it('resolves the binary from the platform package', () => {
    assert.match(resolveAnvilBinary(), /@foundry-rs\/anvil-[a-z0-9]+-[a-z0-9]+\/bin\/anvil(\.exe)?$/);
  });
});

describe('devnet lifecycle', () => {
  it('when anvil dies, `exited` resolves, the error is logged and the bot stops', async () => {
    const errors: string[] = [];
    const devnet = await startDevnet({
      dataDir: null,
      port: await findFreePort(),
      blockTime: 1,
      activity: true,
      activitySwapsPerMinute: 600,
      historyHours: 0,
      logger: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
    });
    process.kill(devnet.anvilPid, 'SIGKILL');
    const exit = await devnet.exited;
    assert.equal(exit.signal, 'SIGKILL');
    for (let i = 0; i < 200 && !errors.some((e) => e.startsWith('devnet: the devnet (anvil) exited')); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(errors.some((e) => e.startsWith('devnet: the devnet (anvil) exited with code null (signal SIGKILL)')), errors.join('\n'));
    const before = devnet.marketBotStats()!;
    // witness: a bot that still ran at the same rate against the dead node would have failed a few swaps by now
    const witnessStop = new AbortController();
    const witness = startMarketBot({ rpcUrl: devnet.rpcUrl, deployment: devnet.deployment, signal: witnessStop.signal, swapsPerMinute: 600, seed: 1 });
    try {
      for (let i = 0; i < 600 && witness.stats().errors < 3; i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(witness.stats().errors >= 3, 'the witness bot tried');
    } finally {
      witnessStop.abort();
      await witness.done;
    }
    assert.deepEqual(devnet.marketBotStats(), before, 'the bot no longer works');
    await devnet.stop(); // still fine
  });

  it('aborting the signal stops the devnet, without an error log', async () => {
    const controller = new AbortController();
    const errors: string[] = [];
    const devnet = await startDevnet({
      dataDir: null,
      port: await findFreePort(),
      blockTime: 1,
      activity: false,
      historyHours: 0,
      signal: controller.signal,
      logger: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
    });
    controller.abort();
    assert.deepEqual(await devnet.exited, { code: 0, signal: null });
    assert.deepEqual(errors, []);
  });

  it('an already aborted signal aborts the start-up and leaves no process behind', async () => {
    const controller = new AbortController();
    controller.abort();
    const port = await findFreePort();
    await assert.rejects(
      startDevnet({ dataDir: null, port, blockTime: 1, activity: false, historyHours: 0, signal: controller.signal }),
      { name: 'AbortError' },
    );
    await assert.rejects(createDevnetRpc(`http://127.0.0.1:${port}`).request('eth_chainId'), noAnswer, 'no anvil left on the port');
  });
});
