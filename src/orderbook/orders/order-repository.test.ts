import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Address, Hex } from 'viem';
import { openDatabase, type Database } from '../../db/connection.js';
import { OrderRepository, type NewOrder } from './order-repository.js';
import type { StoredQuote } from '../quotes/stored-quote.js';

const CHAIN = 31337;
const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}` as Hex;

function order(n: number, overrides: Partial<NewOrder> = {}): NewOrder {
  return {
    chainId: CHAIN, uid: hex(n, 56), owner: hex(1, 20) as Address, sellToken: hex(2, 20) as Address, buyToken: hex(3, 20) as Address, receiver: null,
    sellAmount: 10n ** 18n + BigInt(n), buyAmount: 1n, validTo: 2_000_000_000 + n, appData: hex(0, 32), feeAmount: 0n, kind: 'sell', partiallyFillable: false,
    signature: hex(5, 65), signingScheme: 'eip712', sellTokenBalance: 'erc20', buyTokenBalance: 'erc20', class: 'limit', settlementContract: hex(9, 20) as Address,
    outsideMarket: false, validFrom: null, ...overrides,
  };
}

const quote = (n: number): StoredQuote => ({ id: n, sellAmount: 10n ** 18n + BigInt(n), buyAmount: 3000n + BigInt(n), feeAmount: 5n, gasAmount: 180_000n, gasPrice: 7n, sellTokenPrice: 0.25, solver: `solver-${n}`, verified: n % 2 === 0 });

describe('OrderRepository.insert', () => {
  let database: Database;
  let repo: OrderRepository;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    repo = new OrderRepository(database.db);
  });
  after(async () => {
    await database?.close();
  });

  const events = async (uid: Hex) => Number((await sql<{ n: string }>`select count(*) as n from order_events where order_uid = ${Buffer.from(uid.slice(2), 'hex')} and label = 'created'`.execute(database.db)).rows[0]!.n);

  it('stores orders inserted together as each alone: its quote (if any), one created event; a repeated UID is refused', async () => {
    const results = await Promise.all([
      repo.insert(order(1), quote(1)),
      repo.insert(order(2), null),
      repo.insert(order(1), quote(1)),
      repo.insert(order(3), quote(3)),
      repo.insert(order(4), quote(4)),
    ]);
    assert.deepEqual(results, [true, true, false, true, true]);
    assert.equal(await repo.insert(order(3), null), false, 'already stored');
    for (const n of [1, 2, 3, 4]) {
      const stored = await repo.get(CHAIN, hex(n, 56));
      assert.ok(stored, `order ${n}`);
      assert.equal(stored.sellAmount, 10n ** 18n + BigInt(n));
      assert.equal(stored.validTo, 2_000_000_000 + n);
      assert.equal(await events(hex(n, 56)), 1, `one created event for order ${n}`);
      if (n === 2) assert.equal(stored.quote, null);
      else assert.deepEqual(stored.quote, { ...quote(n), id: null });
    }
  });

  it('without grouping (over a PostgreSQL pool), concurrent inserts give the same answers', async () => {
    const separate = new OrderRepository(database.db, { groupInserts: false });
    const results = await Promise.all([separate.insert(order(30), quote(30)), separate.insert(order(30), quote(30)), separate.insert(order(31), null)]);
    assert.deepEqual([...results].sort(), [false, true, true]);
    assert.deepEqual((await separate.get(CHAIN, hex(30, 56)))?.quote, { ...quote(30), id: null });
    assert.equal(await events(hex(30, 56)), 1);
  });

  it('an order the database refuses fails alone: the others inserted with it are stored', async () => {
    const bad = order(11, { uid: hex(11, 55) }); // a UID of 55 bytes breaks the table's length check
    const results = await Promise.allSettled([repo.insert(order(10), quote(10)), repo.insert(bad, null), repo.insert(order(12), null)]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.equal(results[2].status, 'fulfilled');
    assert.deepEqual((await repo.get(CHAIN, hex(10, 56)))?.quote, { ...quote(10), id: null });
    assert.ok(await repo.get(CHAIN, hex(12, 56)));
  });

  it('inside a transaction, inserts as before (rolled back with it)', async () => {
    await assert.rejects(
      repo.transaction(async (tx) => {
        assert.equal(await repo.insert(order(20), quote(20), tx), true);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(await repo.get(CHAIN, hex(20, 56)), null);
  });
});
