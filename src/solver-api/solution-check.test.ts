/**
 * The driver side's check of engine solutions, rule by rule, with the notify kind each refusal carries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFunctionData, maxUint256, parseAbi, type Address, type Hex } from 'viem';

const GRANT_ABI = parseAbi(['function approve(address, uint256) returns (bool)', 'function increaseAllowance(address, uint256) returns (bool)']);
import { A, B, E18, testOrder } from '../../test/fixtures/solver-auctions.js';
import type { Auction } from '../solver/auction-types.js';
import { getAmountOut } from '../solver/uniswap-v2-pools.js';
import { checkSolution, mergeSolutions, type CheckContext } from './solution-check.js';
import { chargeFeePolicies } from '../protocol/index.js';
import type { SolverConstantProductPool, SolverSolution } from './schemas.js';

const SETTLEMENT = '0x9008d19f58aabd9ed0d60971565aa8510560ab41' as Address;
const RELAYER = '0xc92e8bdf79f0507f65a392b0ab4667716bfe0110' as Address;
const USDC = 10n ** 6n;
const pool: SolverConstantProductPool = {
  kind: 'constantProduct',
  id: '0',
  address: '0x00000000000000000000000000000000000000cc',
  router: '0x00000000000000000000000000000000000000dd',
  fee: '0.003',
  gasEstimate: 110_000n,
  tokens: { [A]: { balance: 1_000n * E18 }, [B]: { balance: 3_000_000n * USDC } },
};
const sell = testOrder({ sellAmount: E18, buyAmount: 2_900n * USDC });
const partial = testOrder({ partiallyFillable: true, sellAmount: 2n * E18, buyAmount: 5_800n * USDC });
const auction: Auction = { chainId: 31337, id: 1, block: 1, timestamp: 1_700_000_000, orders: [sell, partial], prices: new Map(), settlement: SETTLEMENT };
const ctx: CheckContext = { auction, liquidity: new Map([['0', pool]]), settlement: SETTLEMENT, forbiddenTargets: [SETTLEMENT, RELAYER] };
const out = getAmountOut(E18, 1_000n * E18, 3_000_000n * USDC);

function solution(partialSolution: Partial<SolverSolution> = {}): SolverSolution {
  return {
    id: 0,
    prices: { [A]: out, [B]: E18 },
    trades: [{ kind: 'fulfillment', order: sell.uid, executedAmount: E18 }],
    interactions: [{ kind: 'liquidity', id: '0', inputToken: A, outputToken: B, inputAmount: E18, outputAmount: out }],
    ...partialSolution,
  };
}
const refused = (s: SolverSolution, kind: string, reason: RegExp) => {
  const r = checkSolution('mine', s, ctx);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.kind, kind);
    assert.match(r.reason, reason);
  }
};

describe('engine solution checks', () => {
  it("charges the order's fee policies on top of the engine's network fee, and refuses a solution whose limit fails after them (issue 23)", () => {
    const fee = 10n ** 15n;
    const policies = [{ kind: 'volume' as const, factor: 0.0002 }];
    const charged = { ...sell, feePolicies: policies };
    const withFees: CheckContext = { ...ctx, auction: { ...auction, orders: [charged, partial] } };
    const r = checkSolution('mine', solution({ trades: [{ kind: 'fulfillment', order: sell.uid, executedAmount: E18 - fee, fee }] }), withFees);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const [t] = r.solution.trades;
    const expected = chargeFeePolicies({ order: charged, prices: { sell: out, buy: E18 }, executed: E18 - fee, fee }, policies);
    assert.deepEqual([t!.executedSell, t!.executedBuy], [E18, expected.executedBuy]);
    // 2 bps of what the trader would receive after the network fee: ceil((1e18 − fee) × out / 1e18) × 0.0002
    assert.deepEqual(t!.charges?.protocolFees, [(((E18 - fee) * out + E18 - 1n) / E18 * 2n) / 10_000n]);
    assert.ok(expected.executedBuy < ((E18 - fee) * out) / E18, 'the trader receives less than before the fee');
    // a limit that holds at the clearing prices but not after the fees: refused
    const tight = { ...charged, buyAmount: out - fee * out / E18 - 1n };
    const tightCtx: CheckContext = { ...ctx, auction: { ...auction, orders: [tight, partial] } };
    const t2 = checkSolution('mine', solution({ trades: [{ kind: 'fulfillment', order: sell.uid, executedAmount: E18 - fee, fee }] }), tightCtx);
    assert.equal(t2.ok, false);
    if (!t2.ok) assert.match(t2.reason, /limit price not respected/);
  });

  it('accepts a routed order: amounts from the uniform prices, the swap through the auction pool encoded', () => {
    const r = checkSolution('mine', solution(), ctx);
    assert.ok(r.ok);
    if (!r.ok) return;
    assert.equal(r.solution.solver, 'mine');
    assert.deepEqual(r.solution.trades.map((t) => [t.executedSell, t.executedBuy]), [[E18, out]]);
    assert.deepEqual(r.solution.interactions.intra.map((i) => i.target), [A, pool.router]);
  });

  it('refuses with the API kinds: missing and zero prices, limit, executed amounts, unknown orders and liquidity', () => {
    refused(solution({ prices: { [A]: out } }), 'missingPrice', /no clearing price/);
    refused(solution({ prices: { [A]: 0n, [B]: E18 } }), 'invalidClearingPrices', /clearing price 0/);
    refused(solution({ prices: { [A]: 2_000n * USDC, [B]: E18 } }), 'invalidClearingPrices', /limit price/);
    refused(solution({ trades: [{ kind: 'fulfillment', order: sell.uid, executedAmount: E18 / 2n }] }), 'invalidExecutedAmount', /exactly/);
    refused(solution({ trades: [{ kind: 'fulfillment', order: partial.uid, executedAmount: 3n * E18 }] }), 'invalidExecutedAmount', /at most/);
    refused(solution({ trades: [{ kind: 'fulfillment', order: `0x${'ff'.repeat(56)}`, executedAmount: E18 }] }), 'invalidExecutedAmount', /not in the auction/);
    refused(solution({ trades: [] }), 'emptySolution', /no trades/);
    refused(solution({ interactions: [{ kind: 'liquidity', id: '9', inputToken: A, outputToken: B, inputAmount: E18, outputAmount: out }] }), 'fail', /not in the auction/);
    refused(solution({ interactions: [{ kind: 'liquidity', id: '0', inputToken: A, outputToken: B, inputAmount: E18, outputAmount: out + 1n }] }), 'fail', /yields at most/);
  });

  it('refuses a solution that pays out of the settlement buffers, and calls to the settlement or relayer', () => {
    refused(solution({ interactions: [] }), 'nonBufferableTokensUsed', /pay out/);
    const custom = (target: Address) => ({ kind: 'custom' as const, target, value: 0n, callData: '0x' as const, allowances: [], inputs: [{ token: A, amount: E18 }], outputs: [{ token: B, amount: out }] });
    refused(solution({ interactions: [custom(RELAYER)] }), 'fail', /not allowed/);
    refused(solution({ interactions: [custom(SETTLEMENT)] }), 'fail', /not allowed/);
    const ok = checkSolution('mine', solution({ interactions: [{ ...custom(pool.address as Address), allowances: [{ token: A, spender: pool.address, amount: E18 }] }] }), ctx);
    assert.ok(ok.ok, 'a declared custom call with its allowance is fine');
    if (ok.ok) assert.equal(ok.solution.interactions.intra.length, 2);
  });

  it('refuses allowances to anyone but the auction liquidity, unless set back to 0 in the same settlement (issue 19)', () => {
    const attacker = '0x00000000000000000000000000000000000a77ac' as Address;
    const approve = (spender: Address, amount: bigint) => encodeFunctionData({ abi: GRANT_ABI, functionName: 'approve', args: [spender, amount] });
    const increase = encodeFunctionData({ abi: GRANT_ABI, functionName: 'increaseAllowance', args: [attacker, 1n] });
    const call = (target: Address, callData: Hex, declared = false) => ({ kind: 'custom' as const, target, value: 0n, callData, allowances: [], inputs: declared ? [{ token: A, amount: E18 }] : [], outputs: declared ? [{ token: B, amount: out }] : [] });
    const swap = call(pool.address as Address, '0x', true);
    // asked for through the API's allowances field
    refused(solution({ interactions: [{ ...swap, allowances: [{ token: A, spender: attacker, amount: maxUint256 }] }] }), 'fail', /not a known liquidity spender/);
    // or as a plain call on the token, anywhere in the settlement
    refused(solution({ interactions: [swap, call(A, approve(attacker, maxUint256))] }), 'fail', /allowance of 0x0{38}aa to 0x0{35}a77ac, which is not a known liquidity spender, is left open/);
    refused(solution({ interactions: [swap], postInteractions: [{ target: A, value: 0n, callData: approve(attacker, maxUint256) }] }), 'fail', /not a known liquidity spender/);
    refused(solution({ interactions: [swap, call(A, increase)] }), 'fail', /not a known liquidity spender/);
    // set back to 0 later (of the same token): fine; to the auction's router: fine
    assert.ok(checkSolution('mine', solution({ interactions: [call(A, approve(attacker, E18)), swap, call(A, approve(attacker, 0n))] }), ctx).ok);
    assert.ok(checkSolution('mine', solution({ interactions: [call(A, approve(pool.router as Address, E18)), swap] }), ctx).ok);
    refused(solution({ interactions: [call(A, approve(attacker, E18)), swap, call(B, approve(attacker, 0n))] }), 'fail', /left open/);
  });

  it('merges solutions over distinct orders, never the same order twice', () => {
    const one = checkSolution('mine', solution(), ctx);
    const two = checkSolution(
      'mine',
      solution({ trades: [{ kind: 'fulfillment', order: partial.uid, executedAmount: E18 }], interactions: [{ kind: 'custom', target: pool.address, value: 0n, callData: '0x', inputs: [{ token: A, amount: E18 }], outputs: [{ token: B, amount: out }] }] }),
      ctx,
    );
    assert.ok(one.ok && two.ok);
    if (!one.ok || !two.ok) return;
    assert.equal(mergeSolutions([one.solution, two.solution])?.trades.length, 2);
    assert.equal(mergeSolutions([one.solution, one.solution]), null);
  });
});
