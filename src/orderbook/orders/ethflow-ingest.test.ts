// EthFlowIngest against a real (PGlite) database: placements stored as the indexer stores them become orders; a
// placement whose pricing keeps failing for reasons not its own holds no later one back and ends as `other`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Address, Hex } from 'viem';
import { openDatabase, type Database } from '../../db/connection.js';
import { storeEvents } from '../../chain/indexer/store-events.js';
import { emptyEvents, type EthFlowPlacementEvent } from '../../chain/indexer/decode-logs.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { EthFlowIngest } from './ethflow-ingest.js';
import { OrderRepository } from './order-repository.js';
import type { OrderQuoter, QuoteForOrderRequest } from './order-ports.js';

const CHAIN = 31337;
const ethFlow: Address = '0x4444444444444444444444444444444444444444';
const weth: Address = '0x5555555555555555555555555555555555555555';
const sender: Address = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const silent = { info() {}, warn() {} };

function placement(n: number, buyToken: Address, feeAmount = 0n): EthFlowPlacementEvent {
  return {
    blockNumber: 10 + n, logIndex: 0, txHash: `0x${n.toString(16).padStart(64, '0')}`,
    contract: ethFlow, sender, owner: ethFlow,
    orderUid: `0x${n.toString(16).padStart(64, '0')}${ethFlow.slice(2)}ffffffff`,
    order: { sellToken: weth, buyToken, receiver: sender, sellAmount: 10n ** 18n, buyAmount: 1000n, validTo: 0xffffffff, appData: `0x${'00'.repeat(32)}`, feeAmount, kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20' },
    signingScheme: 'eip1271', signature: ethFlow, quoteId: 7n, userValidTo: 2_000_000_000,
  };
}

describe('eth-flow ingest', () => {
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  it('prices placements into orders, placement errors included, and gives up on one that keeps failing without holding the others', async () => {
    const broken: Address = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
    const unsupported: Address = '0xcccccccccccccccccccccccccccccccccccccccc';
    const good: Address = '0xdddddddddddddddddddddddddddddddddddddddd';
    const asked: QuoteForOrderRequest[] = [];
    const quoter: OrderQuoter = {
      async quoteForOrder(r) {
        asked.push(r);
        if (r.buyToken === broken) throw new Error('node unreachable');
        if (r.buyToken === unsupported) throw new OrderBookError('UnsupportedToken', 'not a token');
        return { id: 1, sellAmount: r.sellAmount, buyAmount: 2000n, feeAmount: 0n, gasAmount: 1n, gasPrice: 1n, sellTokenPrice: 1, solver: 'test', verified: false };
      },
    };
    const events = emptyEvents();
    events.ethflowPlacements.push(placement(1, broken), placement(2, unsupported), placement(3, good), placement(4, good, 5n));
    const timestamps = new Map([11, 12, 13, 14].map((b) => [b, 1_900_000_000 + b]));
    await storeEvents(database.db, CHAIN, events, timestamps);
    const orders = new OrderRepository(database.db);
    const ingest = new EthFlowIngest({ chainId: CHAIN, db: database.db, orders, quoter, settlement: '0x9008d19f58aabd9ed0d60971565aa8510560ab41', logger: silent });

    await ingest.ingestPending();
    const uid = (n: number) => events.ethflowPlacements[n - 1]!.orderUid as Hex;
    assert.equal(await orders.get(CHAIN, uid(1)), null, 'not priced yet: no order');
    const unsupportedOrder = await orders.get(CHAIN, uid(2));
    assert.equal(unsupportedOrder?.ethflow?.placementError, 'preValidationError');
    const goodOrder = (await orders.get(CHAIN, uid(3)))!;
    assert.deepEqual(
      { owner: goodOrder.owner, validTo: goodOrder.validTo, class: goodOrder.class, sender: goodOrder.ethflow?.sender, userValidTo: goodOrder.ethflow?.userValidTo, error: goodOrder.ethflow?.placementError, quoted: goodOrder.quote?.buyAmount },
      { owner: ethFlow, validTo: 0xffffffff, class: 'limit', sender, userValidTo: 2_000_000_000, error: null, quoted: 2000n },
    );
    assert.equal(goodOrder.createdAt.getTime(), (1_900_000_000 + 13) * 1000, 'created at the block time');
    assert.equal(asked.find((r) => r.buyToken === good)?.quoteId, 7);
    const feeOrder = (await orders.get(CHAIN, uid(4)))!;
    assert.equal(feeOrder.ethflow?.placementError, 'nonZeroFee');
    assert.equal(feeOrder.class, 'market');
    assert.equal(feeOrder.quote, null);

    for (let pass = 0; pass < 5; pass++) await ingest.ingestPending();
    assert.equal((await orders.get(CHAIN, uid(1)))?.ethflow?.placementError, 'other');
    assert.equal(asked.filter((r) => r.buyToken === broken).length, 6);
  });
});
