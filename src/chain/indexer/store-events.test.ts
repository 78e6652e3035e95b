/**
 * Idempotent event inserts (issue 14, point 8): two indexers over overlapping ranges — the old and the new
 * leader during a hand-over — store the same logs twice; the second store skips them instead of failing, and
 * holder balances move once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { openDatabase, type Database } from '../../db/connection.js';
import { toBytes } from '../../db/codec.js';
import { emptyEvents } from './decode-logs.js';
import { storeEvents } from './store-events.js';

const TOKEN = '0x1111111111111111111111111111111111111111' as Address;
const ALICE = '0x2222222222222222222222222222222222222222' as Address;
const BOB = '0x3333333333333333333333333333333333333333' as Address;
const TX = `0x${'ab'.repeat(32)}` as Hex;
const UID = `0x${'cd'.repeat(56)}` as Hex;

describe('storing indexed events', () => {
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  it('skips events already stored (overlapping ranges) and moves holder balances once', async () => {
    const db = database.db;
    const events = emptyEvents();
    const ref = (logIndex: number) => ({ blockNumber: 10, logIndex, txHash: TX });
    events.transfers.push({ ...ref(0), token: TOKEN, from: ALICE, to: BOB, value: 5n, kind: 'transfer' });
    events.trades.push({ ...ref(1), owner: ALICE, sellToken: TOKEN, buyToken: BOB, sellAmount: 5n, buyAmount: 7n, feeAmount: 0n, orderUid: UID });
    events.settlements.push({ ...ref(2), solver: BOB });
    const timestamps = new Map([[10, 1_700_000_000]]);
    await storeEvents(db, 31337, events, timestamps);
    // the overlapping range: the same logs plus one more transfer
    const again = { ...events, transfers: [...events.transfers, { ...ref(3), token: TOKEN, from: BOB, to: ALICE, value: 2n, kind: 'transfer' as const }] };
    await storeEvents(db, 31337, again, timestamps);

    const count = async (table: 'trades' | 'settlements' | 'erc20_transfers') => (await db.selectFrom(table).select('log_index').where('chain_id', '=', 31337).execute()).length;
    assert.equal(await count('trades'), 1);
    assert.equal(await count('settlements'), 1);
    assert.equal(await count('erc20_transfers'), 2);
    const balance = async (holder: Address) =>
      (await db.selectFrom('token_holder_balances').select('balance').where('chain_id', '=', 31337).where('holder', '=', toBytes(holder)).executeTakeFirst())?.balance;
    assert.equal(String(await balance(BOB)), '3', 'the repeated transfer is counted once: +5 −2');
    assert.equal(String(await balance(ALICE)), '-3');
  });
});
