/**
 * Prepared devnets: a chain saved once and copied at a fresh start. A template with history is moved to the
 * present on the way — every block shifted by the same time, the chain re-linked — and anvil loads the copy as a
 * whole chain: contiguous parent hashes, block 0 as recorded, the history ending now, the contracts deployed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { startDevnet } from './index.js';
import { publishDevnetTemplate, shiftStateTimestamps, isDevnetTemplate } from './template.js';
import { createDevnetRpc } from './rpc.js';

interface Block {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
}

describe('devnet templates', () => {
  const work = mkdtempSync(join(tmpdir(), 'bb-template-'));
  const template = join(work, 'template');
  let original: Block[] = [];
  after(() => rmSync(work, { recursive: true, force: true }));

  before(async () => {
    const made = await startDevnet({ dataDir: join(work, 'made'), port: 0, blockTime: 0, activity: false, historyHours: 1 });
    const rpc = createDevnetRpc(made.rpcUrl);
    const head = Number(BigInt(await rpc.request<Hex>('eth_blockNumber')));
    original = await rpc.batch<Block>(Array.from({ length: head + 1 }, (_, i) => ({ method: 'eth_getBlockByNumber', params: [`0x${i.toString(16)}`, false] })));
    await made.stop();
    publishDevnetTemplate(join(work, 'made', 'devnet'), template);
    // the template's history ends at the second it was made: the copy must start in a later second to be moved
    const last = Number(BigInt(original.at(-1)!.timestamp));
    while (Math.floor(Date.now() / 1000) <= last) await new Promise((r) => setTimeout(r, 50));
  });

  it('a fresh start copies the template, moved so that its history ends now', async () => {
    assert.ok(isDevnetTemplate(template));
    const started = Math.floor(Date.now() / 1000);
    const devnet = await startDevnet({ dataDir: join(work, 'copy'), port: 0, blockTime: 0, activity: false, historyHours: 1, template });
    try {
      assert.equal(devnet.timings.deployMs, null, 'nothing was deployed');
      assert.equal(devnet.fresh, true, 'a new chain: what was indexed from another is stale');
      const rpc = createDevnetRpc(devnet.rpcUrl);
      const blocks = await rpc.batch<Block>(original.map((_, i) => ({ method: 'eth_getBlockByNumber', params: [`0x${i.toString(16)}`, false] })));
      assert.equal(blocks[0]!.hash, devnet.genesisHash);
      const shift = Number(BigInt(blocks[0]!.timestamp) - BigInt(original[0]!.timestamp));
      assert.ok(shift > 0);
      blocks.forEach((b, i) => {
        assert.equal(Number(BigInt(b.timestamp) - BigInt(original[i]!.timestamp)), shift, `block ${i} moved like the others`);
        if (i > 0) assert.equal(b.parentHash, blocks[i - 1]!.hash, `block ${i} links to its parent`);
        assert.notEqual(b.hash, original[i]!.hash);
      });
      assert.ok(Number(BigInt(blocks.at(-1)!.timestamp)) >= started, 'the history ends at this start');
      const code = await rpc.request<Hex>('eth_getCode', [devnet.deployment.contracts.settlement, 'latest']);
      assert.ok(code.length > 2, 'the settlement is there');
      const receipt = await rpc.request<{ blockHash: Hex } | null>('eth_getTransactionReceipt', [
        (await rpc.request<{ transactions: Hex[] }>('eth_getBlockByNumber', ['0x1', false])).transactions[0],
      ]);
      assert.equal(receipt?.blockHash, blocks[1]!.hash, 'transactions name their moved block');
    } finally {
      await devnet.stop();
    }
  });

  it('refuses a saved chain whose headers do not link up under its hashing', () => {
    const state = JSON.parse(readFileSync(join(template, 'state.json'), 'utf8')) as { blocks: Array<{ header: { number: Hex; parentHash: Hex } }> };
    const one = state.blocks.find((b) => b.header.number === '0x1')!;
    one.header.parentHash = `0x${'11'.repeat(32)}`;
    assert.equal(shiftStateTimestamps(state as never, 60), null);
  });
});
