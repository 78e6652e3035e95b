/**
 * The hooks indexer on the real devnet: trampoline calls made as the settlement (impersonated), the main
 * indexer's checkpoint written by the test, rows with success per hook; a reorg (anvil snapshot/revert onto
 * another branch) removes the rows of the abandoned branch; the checkpoint makes a second pass a no-op.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeFunctionData, numberToHex, type Address, type Hex } from 'viem';
import { startTestDevnet, type TestDevnet } from '../../chain/test-devnet.js';
import { createChainClient } from '../../chain/client.js';
import { writeCheckpoint } from '../../chain/indexer/checkpoint-store.js';
import { fetchBlockHeader } from '../../chain/indexer/block-headers.js';
import { openDatabase, type Database } from '../../db/connection.js';
import { toHex } from '../../db/codec.js';
import { HOOKS_TRAMPOLINE_ABI } from '../../protocol/index.js';
import { HookIndexer } from './hook-indexer.js';

describe('HookIndexer', () => {
  let chain: TestDevnet;
  let database: Database;
  let indexer: HookIndexer;
  let client: ReturnType<typeof createChainClient>;
  let trampoline: Address;
  let settlement: Address;
  let token: Address;

  before(async () => {
    chain = await startTestDevnet({ blockTime: 0 });
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    client = createChainClient({ chainId: 31337, rpcUrl: chain.rpcUrl, timeoutMs: 10_000 });
    const { contracts, tokens } = chain.devnet.deployment;
    trampoline = contracts.hooksTrampoline;
    settlement = contracts.settlement;
    token = tokens.find((t) => t.symbol === 'USDC')!.address;
    await chain.rpc('anvil_impersonateAccount', [settlement]);
    await chain.rpc('anvil_setBalance', [settlement, numberToHex(10n ** 18n)]);
    indexer = new HookIndexer({ chainId: 31337, client, db: database.db, trampoline });
  });
  after(async () => {
    await database?.close();
    await chain?.stop();
  });

  /** The main indexer "has checked" everything up to the head. */
  async function mainAtHead(): Promise<number> {
    const head = await chain.blockNumber();
    const header = await fetchBlockHeader(client, head);
    await writeCheckpoint(database.db, 31337, 'main', { number: head, hash: header!.hash });
    return head;
  }

  const execute = (uid: Hex, hookType: number, hooks: Array<{ callData: Hex; gasLimit: bigint }>) =>
    chain.sendAndWait([{ from: settlement, to: trampoline, gas: 1_000_000n, data: encodeFunctionData({ abi: HOOKS_TRAMPOLINE_ABI, functionName: 'execute', args: [uid, hookType, hooks.map((h) => ({ target: token, ...h }))] }) }]);
  const rows = () => database.db.selectFrom('hook_executions').selectAll().orderBy('block_number').orderBy('log_index').execute();
  const balanceOfCall = encodeFunctionData({ abi: [{ type: 'function', name: 'totalSupply', stateMutability: 'view', inputs: [], outputs: [{ type: 'uint256' }] }], functionName: 'totalSupply' });

  it('indexes one row per executed hook with its success, up to the main checkpoint only', async () => {
    const [receipt] = await execute(`0x${'01'.repeat(56)}`, 1, [{ callData: balanceOfCall, gasLimit: 50_000n }, { callData: '0xdeadbeef', gasLimit: 30_000n }]);
    assert.equal(receipt!.status, '0x1');
    assert.equal(await indexer.indexToMain(), null, 'nothing before the main indexer started');
    const head = await mainAtHead();
    assert.equal(await indexer.indexToMain(), head);
    const indexed = await rows();
    assert.deepEqual(indexed.map((r) => [r.hook_type, r.hook_index, r.success, r.gas_limit, toHex(r.tx_hash)]), [
      ['post', 0, true, '50000', receipt!.transactionHash],
      ['post', 1, false, '30000', receipt!.transactionHash],
    ]);
    assert.equal(indexed[0]!.app_hash, null, 'an order we do not know: app fields null');
    await chain.mine(2);
    await execute(`0x${'02'.repeat(56)}`, 0, [{ callData: balanceOfCall, gasLimit: 50_000n }]);
    assert.equal((await rows()).length, 2, 'not past the main checkpoint');
    await indexer.indexToMain();
    assert.equal((await rows()).length, 2, 'a second pass at the same checkpoint adds nothing');
  });

  it('drops the rows of an abandoned branch after a reorg and indexes the new one', async () => {
    const snapshot = await chain.rpc<Hex>('evm_snapshot');
    const [gone] = await execute(`0x${'03'.repeat(56)}`, 0, [{ callData: balanceOfCall, gasLimit: 40_000n }]);
    await mainAtHead();
    await indexer.indexToMain();
    assert.ok((await rows()).some((r) => toHex(r.tx_hash) === gone!.transactionHash));

    await chain.rpc('evm_revert', [snapshot]);
    await chain.mine(1); // another block at the same height: the checkpoint's hash no longer matches
    const [kept] = await execute(`0x${'04'.repeat(56)}`, 1, [{ callData: '0xdeadbeef', gasLimit: 25_000n }]);
    await mainAtHead();
    await indexer.indexToMain();
    const after = await rows();
    assert.ok(!after.some((r) => toHex(r.tx_hash) === gone!.transactionHash), 'the abandoned branch is gone');
    assert.ok(after.some((r) => toHex(r.tx_hash) === kept!.transactionHash && r.success === false));
    assert.equal(after.filter((r) => r.hook_type === 'pre' && r.gas_limit === '50000').length, 1, 'the earlier pre-hook is still there, once');
  });

  it('without a checkpoint starts at its start block (a fork: where the main indexer starts); an aborted pass reads no further range', async () => {
    // its own rows and checkpoints under another chain id, in the same database
    const chainId = 31_338;
    const [early] = await execute(`0x${'05'.repeat(56)}`, 0, [{ callData: balanceOfCall, gasLimit: 45_000n }]);
    const startBlock = Number(BigInt(early!.blockNumber)) + 1;
    await chain.mine(3);
    const [late] = await execute(`0x${'06'.repeat(56)}`, 0, [{ callData: balanceOfCall, gasLimit: 35_000n }]);
    const head = await chain.blockNumber();
    await writeCheckpoint(database.db, chainId, 'main', { number: head, hash: (await fetchBlockHeader(client, head))!.hash });
    const fromStart = new HookIndexer({ chainId, client, db: database.db, trampoline, startBlock, blockRange: 2 });
    const hashes = async () => (await database.db.selectFrom('hook_executions').select('tx_hash').where('chain_id', '=', chainId).execute()).map((r) => toHex(r.tx_hash));

    const stopped = new AbortController();
    stopped.abort();
    assert.equal(await fromStart.indexToMain(stopped.signal), null, 'stopped before its first range');
    assert.deepEqual(await hashes(), []);
    assert.equal(await database.db.selectFrom('indexer_checkpoints').select('name').where('chain_id', '=', chainId).where('name', '=', 'hooks').executeTakeFirst(), undefined);

    assert.equal(await fromStart.indexToMain(), head);
    assert.deepEqual(await hashes(), [late!.transactionHash], 'the hook before the start block is not read');
  });
});
