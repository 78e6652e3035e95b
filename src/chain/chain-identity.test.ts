import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../db/connection.js';
import { ChainIdentityError, ensureChainIdentity } from './chain-identity.js';

const A = `0x${'aa'.repeat(32)}` as const;
const B = `0x${'bb'.repeat(32)}` as const;

describe('chain identity (block-0 hash)', () => {
  let database: Database;
  const quotes = async (chainId: number) => Number((await sql<{ n: string }>`select count(*) as n from quotes where chain_id = ${chainId}`.execute(database.db)).rows[0]!.n);
  const storeQuote = (chainId: number) =>
    sql`insert into quotes (chain_id, sell_token, buy_token, sell_amount, buy_amount, fee_amount, gas_amount, gas_price, sell_token_price, kind, quote_kind, signing_scheme, owner, solver, verified, expiration)
        values (${chainId}, ${Buffer.alloc(20)}, ${Buffer.alloc(20, 1)}, 1, 1, 0, 0, 0, 1, 'sell', 'standard', 'eip712', ${Buffer.alloc(20)}, 'x', false, now())`.execute(database.db);

  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  it('a real chain whose block 0 changed stops the node with a clear error and keeps its data', async () => {
    assert.deepEqual(await ensureChainIdentity(database.db, 100, A, { resettable: false }), { reset: false });
    await storeQuote(100);
    await assert.rejects(ensureChainIdentity(database.db, 100, B, { resettable: false }), (err: unknown) => {
      assert.ok(err instanceof ChainIdentityError);
      assert.match(err.message, /chain 100: the RPC node's block 0 is 0xbb.*block 0 0xaa.*Nothing was deleted/);
      return true;
    });
    assert.equal(await quotes(100), 1, 'nothing deleted');
    assert.deepEqual(await ensureChainIdentity(database.db, 100, A, { resettable: false }), { reset: false }, 'the right node is accepted again');
  });

  it('the devnet is reset when its block 0 changed', async () => {
    await ensureChainIdentity(database.db, 31337, A, { resettable: true });
    await storeQuote(31337);
    assert.deepEqual(await ensureChainIdentity(database.db, 31337, B, { resettable: true }), { reset: true });
    assert.equal(await quotes(31337), 0);
  });
});
