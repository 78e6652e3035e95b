/**
 * The codec of the Solver Engine API: what we send validates against the upstream document itself (errata
 * applied), decoding then encoding gives back exactly the JSON it read (every field, any amount), amounts are
 * bigint inside, and malformed bodies are refused with the field named.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { upstreamValidators } from '../../test/fixtures/solvers-openapi.js';
import { skipUnless } from '../../test/fixtures/required-services.js';
import { CodecError, decodeAuction, decodeNotification, decodeSolveResponse, encodeAuction, encodeSolveResponse } from './codec.js';
import { fromSolverOrder, solvableAmounts, toSolverOrder, toSolverOrders } from './orders.js';
import { A, B, E18, testAuction, testOrder } from '../../test/fixtures/solver-auctions.js';

// the upstream document is read from the project's shared folder (skipped with a line where it is absent)
const skipUpstream = await skipUnless('solvers-openapi');
const upstream = skipUpstream ? (undefined as never) : upstreamValidators();

describe('Solver Engine API codec', () => {
  it('an auction we encode validates against the upstream document, every field production sends included', { skip: skipUpstream }, () => {
    const orders = [
      testOrder(),
      testOrder({ kind: 'buy', partiallyFillable: true, receiver: '0x00000000000000000000000000000000000000ee', signingScheme: 'presign', class: 'market', remaining: 10n ** 9n }),
      testOrder({ preInteractions: [{ target: A, value: 0n, callData: '0x1234' }], postInteractions: [{ target: B, value: 1n, callData: '0x' }] }),
    ];
    const wire = encodeAuction(testAuction(orders));
    assert.ok(upstream.auction(wire), upstream.errors(upstream.auction));
    // the document's validator does refuse what it should
    const { uid: _uid, ...noUid } = wire.orders[0] as Record<string, unknown>;
    assert.equal(upstream.auction({ ...wire, orders: [noUid] }), false);
    assert.equal(upstream.auction({ ...wire, liquidity: [{ ...(wire.liquidity[0] as object), kind: 'weird' }] }), false);
    const [fok, buy] = wire.orders as Array<Record<string, unknown>>;
    for (const field of ['fullSellAmount', 'fullBuyAmount', 'receiver', 'validTo', 'feePolicies', 'preInteractions', 'postInteractions', 'sellTokenSource', 'buyTokenDestination', 'signingScheme', 'signature', 'appData', 'class', 'owner'])
      assert.ok(field in fok, `orders carry ${field}`);
    assert.equal(fok.receiver, '0x0000000000000000000000000000000000000000');
    assert.equal(buy.signingScheme, 'preSign');
    assert.equal(buy.buyAmount, '1000000000');
    assert.equal(buy.fullBuyAmount, '3000000000');
    // the limit price of what is left, rounded against the trader: 1e9 of 3e9 bought for at most a third of 1e18
    assert.equal(buy.sellAmount, (E18 / 3n).toString());
    assert.equal(typeof (wire.tokens as Record<string, { referencePrice: unknown }>)[A].referencePrice, 'string');
  });

  it('decoding then encoding gives back exactly the JSON read, for any amounts (amounts are bigint inside)', () => {
    const amount = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
    fc.assert(
      fc.property(amount, amount, amount, fc.boolean(), fc.constantFrom('sell' as const, 'buy' as const), (x, y, z, partial, kind) => {
        const order = testOrder({ kind, partiallyFillable: partial, sellAmount: x + 1n, buyAmount: y + 1n, remaining: 1n, available: z });
        const json = JSON.stringify(encodeAuction(testAuction([order])));
        const decoded = decodeAuction(json);
        assert.equal(typeof decoded.orders[0].fullSellAmount, 'bigint');
        assert.equal(typeof decoded.effectiveGasPrice, 'bigint');
        assert.equal(JSON.stringify(encodeAuction(decoded)), json);
      }),
      { numRuns: 60 },
    );
    // fields we never send, and ones the document does not name, survive too
    const extra = JSON.parse(JSON.stringify(encodeAuction(testAuction([testOrder()]))));
    extra.orders[0].flashloanHint = { liquidityProvider: A, protocolAdapter: A, receiver: B, token: A, amount: '5' };
    extra.orders[0].feePolicies = [{ surplus: { factor: 0.5, maxVolumeFactor: 0.01 } }, { priceImprovement: { factor: 0.5, maxVolumeFactor: 0.0098, quote: { sellAmount: '1', buyAmount: '2', fee: '3' } } }, { volume: { factor: 0.1 } }];
    extra.liquidity.push({ kind: 'concentratedLiquidity', id: '1', address: A, gasEstimate: '1', tokens: [A, B], sqrtPrice: '79228162514264337593543950336', liquidity: '10', tick: -5, liquidityNet: { '-10': '-7', '20': '7' }, fee: '0.0005', router: B });
    extra.liquidity.push({ kind: 'stable', id: '2', address: A, gasEstimate: '1', tokens: { [A]: { balance: '1', scalingFactor: '1' } }, amplificationParameter: '200', fee: '0.0004', balancer_pool_id: `0x${'ab'.repeat(32)}` });
    extra.vendorField = { anything: [1, 2] };
    if (upstream) assert.ok(upstream.auction(extra), upstream.errors(upstream.auction));
    assert.deepEqual(encodeAuction(decodeAuction(JSON.stringify(extra))), extra);
    assert.equal(decodeAuction(extra).orders[0].flashloanHint?.amount, 5n);
  });

  it('solutions round-trip and validate against the document; a solution of the document is read', { skip: skipUpstream }, () => {
    const body = {
      solutions: [
        {
          id: 0,
          prices: { [A]: '3000000000', [B]: '1000000000000000000' },
          trades: [
            { kind: 'fulfillment', order: testOrder().uid, executedAmount: '1000000000000000000', fee: '0' },
            {
              kind: 'jit',
              executedAmount: '5',
              fee: '0',
              order: { sellToken: A, buyToken: B, receiver: A, sellAmount: '5', buyAmount: '6', validTo: 1, appData: `0x${'00'.repeat(32)}`, kind: 'sell', sellTokenBalance: 'erc20', buyTokenBalance: 'erc20', signingScheme: 'eip1271', signature: '0x' },
            },
          ],
          preInteractions: [{ target: A, value: '0', callData: '0xca11da7a' }],
          interactions: [
            { kind: 'liquidity', internalize: true, id: '0', inputToken: A, outputToken: B, inputAmount: '1', outputAmount: '2' },
            { kind: 'custom', internalize: false, target: B, value: '0', callData: '0x01020304', allowances: [{ token: A, spender: B, amount: '9' }], inputs: [{ token: A, amount: '1' }], outputs: [] },
          ],
          postInteractions: [],
          gas: 150000,
          flashloans: {},
        },
      ],
    };
    assert.ok(upstream.solveResponse(body), upstream.errors(upstream.solveResponse));
    const decoded = decodeSolveResponse(JSON.stringify(body));
    assert.equal(decoded.solutions[0].prices[A], 3_000_000_000n);
    assert.deepEqual(encodeSolveResponse(decoded), body);
  });

  it('refuses malformed bodies naming what is wrong', () => {
    const good = JSON.parse(JSON.stringify(encodeAuction(testAuction([testOrder()]))));
    const refused = (value: unknown, pattern: RegExp) => assert.throws(() => decodeAuction(value), (err: unknown) => err instanceof CodecError && pattern.test(err.message));
    refused('{"tokens": ', /malformed JSON/);
    refused({ ...good, orders: [{ ...good.orders[0], sellAmount: '12abc' }] }, /orders\.0\.sellAmount/);
    refused({ ...good, effectiveGasPrice: '-1' }, /effectiveGasPrice/);
    refused({ ...good, effectiveGasPrice: 1 }, /effectiveGasPrice/);
    refused({ ...good, effectiveGasPrice: (2n ** 256n).toString() + '0' }, /effectiveGasPrice/);
    refused({ ...good, deadline: 'tomorrow' }, /deadline/);
    const { liquidity: _l, ...noLiquidity } = good;
    refused(noLiquidity, /liquidity/);
    refused({ ...good, orders: [{ ...good.orders[0], kind: 'swap' }] }, /orders\.0/);
    assert.throws(() => decodeSolveResponse({ solutions: [{ id: 0, prices: {}, trades: [] }] }), CodecError);
    assert.throws(() => decodeNotification({ auctionId: '1', kind: 'great' }), CodecError);
    assert.equal(decodeNotification({ auctionId: '1', solutionId: 2, kind: 'success' }).kind, 'success');
  });

  it('the engine side reads back the order it was sent: signed amounts, what is left, funded', () => {
    const partial = testOrder({ kind: 'sell', partiallyFillable: true, remaining: E18 / 2n, available: E18 / 4n });
    const wire = toSolverOrder(partial);
    assert.deepEqual(solvableAmounts(partial), { sell: E18 / 4n, buy: 750n * 10n ** 6n });
    const back = fromSolverOrder(wire, 3);
    assert.equal(back.sellAmount, E18);
    assert.equal(back.remaining, E18 / 4n);
    assert.equal(back.available, E18 / 4n);
    assert.equal(back.created, 3);
    assert.equal(back.signingScheme, 'eip712');
    assert.equal(back.receiver, null);
  });
});

describe('Solver Engine API: an owner is never offered beyond its balance (issue 19, major 9)', () => {
  it("its fill-or-kill orders come first, then each partially fillable order is offered what is left, oldest first", () => {
    // one owner with 1 WETH (`available`, shared by its orders of one sell token): 0.6 fill-or-kill, two partial orders
    const owner = '0x00000000000000000000000000000000000000a1' as const;
    const fok = testOrder({ owner, sellAmount: (E18 * 6n) / 10n, available: E18, created: 3 });
    const partOld = testOrder({ owner, partiallyFillable: true, remaining: E18, available: E18, created: 1 });
    const partNew = testOrder({ owner, partiallyFillable: true, remaining: E18, available: E18, created: 2 });
    const other = testOrder({ partiallyFillable: true, remaining: E18, available: E18, created: 4 });
    const wire = toSolverOrders([other, partNew, fok, partOld]);
    // oldest first; the newer partial order has nothing left and is not sent
    assert.deepEqual(wire.map((o) => o.uid), [partOld.uid, fok.uid, other.uid]);
    assert.equal(wire[0]!.sellAmount, (E18 * 4n) / 10n);
    assert.equal(wire[1]!.sellAmount, (E18 * 6n) / 10n);
    assert.equal(wire[2]!.sellAmount, E18, 'another owner is not touched');
    // what the engine side reads back for the owner sums to its balance, not more
    const back = wire.map((o, i) => fromSolverOrder(o, i)).filter((o) => o.owner === owner);
    assert.equal(back.reduce((sum, o) => sum + o.available, 0n), E18);
  });
});

describe('Solver Engine API: eth-flow orders', () => {
  it('go to engines as production sends them: owner the contract, validTo 2^32 − 1, EIP-1271 with the contract as signature, wrapAll first', () => {
    const ethFlow = '0x00000000000000000000000000000000000e7f10' as const;
    const order = testOrder({
      owner: ethFlow, validTo: 0xffffffff, signingScheme: 'eip1271', signature: ethFlow, class: 'limit', feeAmount: 0n,
      preInteractions: [{ target: ethFlow, value: 0n, callData: '0x4c84c1c8' }],
    });
    const [wire] = encodeAuction(testAuction([order])).orders as Array<Record<string, unknown>>;
    assert.equal(wire!.owner, ethFlow);
    assert.equal(wire!.validTo, 4294967295);
    assert.equal(wire!.signingScheme, 'eip1271');
    assert.equal(wire!.signature, ethFlow);
    assert.equal(wire!.class, 'limit');
    assert.deepEqual((wire!.preInteractions as Array<Record<string, unknown>>).map((i) => [i.target, i.value, i.callData]), [[ethFlow, '0', '0x4c84c1c8']]);
    if (!skipUpstream) assert.ok(upstream.auction(encodeAuction(testAuction([order]))), upstream.errors(upstream.auction));
  });
});
