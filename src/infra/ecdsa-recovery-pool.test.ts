/**
 * Signer recovery on worker threads gives exactly what viem gives on this thread, fails as it fails, and keeps
 * answering after the pool is closed (on this thread).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { recoverAddress, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { EcdsaRecoveryPool } from './ecdsa-recovery-pool.js';
import { recoverEcdsaSigner, SignatureError } from '../protocol/index.js';

const key: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const owner = privateKeyToAccount(key).address;
const hashes = Array.from({ length: 24 }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}` as Hex);

describe('ECDSA recovery pool', () => {
  it('recovers on two threads exactly as viem does on this one, many at once', async () => {
    const pool = new EcdsaRecoveryPool(2);
    try {
      const signatures = await Promise.all(hashes.map((hash) => sign({ hash, privateKey: key, to: 'hex' })));
      const recovered = await Promise.all(hashes.map((hash, i) => pool.recover(hash, signatures[i]!)));
      assert.deepEqual(recovered, await Promise.all(hashes.map((hash, i) => recoverAddress({ hash, signature: signatures[i]! }))));
      assert.ok(recovered.every((a) => a === owner));
      assert.equal(pool.running, 2, 'on both threads');
      // through the protocol function, both schemes
      const digest = hashes[0]!;
      assert.equal(await recoverEcdsaSigner({ scheme: 'eip712', signature: signatures[0]!, digest }, pool.recover), owner.toLowerCase());
    } finally {
      await pool.close();
    }
  });

  it('an unrecoverable signature fails with SignatureError, and the thread goes on', async () => {
    const pool = new EcdsaRecoveryPool(1);
    try {
      const zeroR = `0x${'00'.repeat(64)}1b` as Hex;
      await assert.rejects(recoverEcdsaSigner({ scheme: 'eip712', signature: zeroR, digest: hashes[0]! }, pool.recover), (err: unknown) => err instanceof SignatureError && err.code === 'unrecoverable');
      const signature = await sign({ hash: hashes[1]!, privateKey: key, to: 'hex' });
      assert.equal(await pool.recover(hashes[1]!, signature), owner);
    } finally {
      await pool.close();
    }
  });

  it('after close, and with no threads, recovers on this thread', async () => {
    const signature = await sign({ hash: hashes[2]!, privateKey: key, to: 'hex' });
    const pool = new EcdsaRecoveryPool(1);
    assert.equal(await pool.recover(hashes[2]!, signature), owner);
    await pool.close();
    assert.equal(pool.running, 0);
    assert.equal(await pool.recover(hashes[2]!, signature), owner);
    assert.equal(pool.running, 0, 'no thread after close');
    assert.equal(await new EcdsaRecoveryPool(0).recover(hashes[2]!, signature), owner);
  });
});
