/**
 * The driver side's reading of an engine's solution, checked as the protocol checks it before a solution may
 * compete: every traded order is in the auction and traded once, every traded token has a positive uniform
 * clearing price, the executed amount fits the order (all of it for fill-or-kill), the amounts the contract
 * derives from the uniform prices respect the order's limit price, `liquidity` interactions use the auction's
 * liquidity without taking more out of a pool than it gives (reserves updated swap by swap), custom calls
 * never target the settlement or the vault relayer, allowances go only to the auction's liquidity, pools or routers (or are
 * set back to 0 later in the same settlement), and the settlement ends with no less of any token than it had
 * (`verifySolution`, as declared; the driver's simulation checks the real balances). A refused solution comes back with the notify kind of the API and the reason.
 */
import { decodeFunctionData, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import type { Auction, SolvableOrder } from '../solver/auction-types.js';
import { BUY_ETH_ADDRESS, chargeFeePolicies } from '../protocol/index.js';
import { ceilDiv, InvalidSolutionError, verifySolution, type BalanceEffect, type Interaction, type ProposedTrade, type Solution } from '../solver/solution.js';
import { getAmountOut } from '../solver/uniswap-v2-pools.js';
import type { NotifyKind, SolverConstantProductPool, SolverSolution } from './schemas.js';

const ERC20_APPROVE = parseAbi(['function approve(address spender, uint256 amount) returns (bool)']);
/** the ways a call from the settlement grants an allowance */
const GRANTS = parseAbi(['function approve(address spender, uint256 amount) returns (bool)', 'function increaseAllowance(address spender, uint256 addedValue) returns (bool)']);
const ROUTER_SWAP = parseAbi(['function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)']);

export interface CheckContext {
  auction: Auction;
  liquidity: Map<string, SolverConstantProductPool>;
  settlement: Address;
  /** contracts no interaction may call (the settlement itself, the vault relayer) */
  forbiddenTargets: Address[];
}

export type CheckedSolution = { ok: true; solution: Solution } | { ok: false; kind: NotifyKind; reason: string };

class Refusal extends Error {
  constructor(
    readonly kind: NotifyKind,
    message: string,
  ) {
    super(message);
  }
}

const lower = (a: string): Address => a.toLowerCase() as Address;

/** Turns a decoded engine solution into our `Solution` named after `engine`, or says why it is refused. */
export function checkSolution(engine: string, wire: SolverSolution, ctx: CheckContext): CheckedSolution {
  try {
    return { ok: true, solution: toSolution(engine, wire, ctx) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, kind: err.kind, reason: err.message };
    if (err instanceof InvalidSolutionError) return { ok: false, ...kindOfInvalid(err.message) };
    throw err;
  }
}

function kindOfInvalid(message: string): { kind: NotifyKind; reason: string } {
  if (message.includes('limit price')) return { kind: 'invalidClearingPrices', reason: message };
  if (message.includes('pay out')) return { kind: 'nonBufferableTokensUsed', reason: message };
  return { kind: 'invalidExecutedAmount', reason: message };
}

function toSolution(engine: string, wire: SolverSolution, ctx: CheckContext): Solution {
  if (wire.trades.length === 0) throw new Refusal('emptySolution', 'no trades');
  if (wire.flashloans && Object.keys(wire.flashloans).length > 0) throw new Refusal('fail', 'flashloans are not supported');
  const orders = new Map(ctx.auction.orders.map((o) => [o.uid, o]));
  const prices = new Map<Address, bigint>(Object.entries(wire.prices).map(([t, p]) => [lower(t), p]));
  const trades: ProposedTrade[] = [];
  const traded = new Set<string>();
  const clearing = new Map<Address, bigint>();
  for (const trade of wire.trades) {
    if (trade.kind === 'jit') throw new Refusal('fail', 'JIT orders are not supported');
    const uid = trade.order.toLowerCase();
    const order = orders.get(uid as SolvableOrder['uid']);
    if (!order) throw new Refusal('invalidExecutedAmount', `order ${uid} is not in the auction`);
    if (traded.has(uid)) throw new Refusal('invalidExecutedAmount', `order ${uid} traded twice`);
    traded.add(uid);
    const sellPrice = prices.get(order.sellToken);
    const buyPrice = prices.get(order.buyToken);
    if (sellPrice === undefined || buyPrice === undefined) throw new Refusal('missingPrice', `order ${uid}: no clearing price for ${sellPrice === undefined ? order.sellToken : order.buyToken}`);
    if (sellPrice <= 0n || buyPrice <= 0n) throw new Refusal('invalidClearingPrices', `order ${uid}: clearing price 0 for ${sellPrice <= 0n ? order.sellToken : order.buyToken}`);
    const fee = trade.fee ?? 0n;
    if (fee > 0n && order.class === 'market') throw new Refusal('invalidExecutedAmount', `order ${uid}: a fee on a market order`);
    const executed = trade.executedAmount;
    const filled = order.kind === 'sell' ? executed + fee : executed;
    const full = order.kind === 'sell' ? order.sellAmount : order.buyAmount;
    if (executed <= 0n) throw new Refusal('invalidExecutedAmount', `order ${uid}: executed amount 0`);
    if (order.partiallyFillable ? filled > order.remaining : filled !== full || order.remaining !== full)
      throw new Refusal('invalidExecutedAmount', `order ${uid}: executed ${filled} does not fit the order (${order.partiallyFillable ? `at most ${order.remaining}` : `exactly ${full}`})`);
    if (order.sellAmount * sellPrice < order.buyAmount * buyPrice) throw new Refusal('invalidClearingPrices', `order ${uid}: limit price not respected by the clearing prices`);
    // the order's fee policies on top of the engine's network fee, at the uniform prices (issue 23, reference §5);
    // a trade whose limit no longer holds after them makes the solution fail the limit check below
    const tradePrices = { sell: sellPrice, buy: buyPrice };
    const charged = chargeFeePolicies({ order, prices: tradePrices, executed, fee }, order.feePolicies);
    const atUniform = order.kind === 'sell' ? { sell: executed, buy: ceilDiv(executed * sellPrice, buyPrice) } : { sell: (executed * buyPrice) / sellPrice, buy: executed };
    trades.push({
      order,
      executedSell: charged.executedSell,
      executedBuy: charged.executedBuy,
      charges: { prices: tradePrices, networkFee: fee, policies: order.feePolicies, protocolFees: charged.protocolFees, atUniform },
    });
    clearing.set(order.sellToken, sellPrice);
    clearing.set(order.buyToken, buyPrice);
  }
  const { intra, effects } = interactionsOf(wire, ctx);
  const call = (c: { target: string; value: bigint; callData: string }): Interaction => {
    if (ctx.forbiddenTargets.includes(lower(c.target))) throw new Refusal('fail', `an interaction calls ${lower(c.target)}, which is not allowed`);
    return { target: lower(c.target), value: c.value, callData: c.callData as Hex };
  };
  const solution: Solution = {
    solver: engine,
    trades,
    clearingPrices: clearing,
    interactions: { pre: (wire.preInteractions ?? []).map(call), intra, post: (wire.postInteractions ?? []).map(call) },
    interactionEffects: effects,
  };
  checkAllowances(solution, knownSpenders(ctx));
  verifySolution(solution);
  return solution;
}

/** Who may hold an allowance from the settlement after it: the auction's liquidity (its pools and their routers). */
function knownSpenders(ctx: CheckContext): Set<Address> {
  return new Set([...ctx.liquidity.values()].flatMap((pool) => [lower(pool.router), lower(pool.address)]));
}

/** The allowance a call grants (`approve` / `increaseAllowance` on its target), or null. */
function grantOf(i: Interaction): { token: Address; spender: Address; amount: bigint; revokes: boolean } | null {
  if (!i.callData.startsWith('0x095ea7b3') && !i.callData.startsWith('0x39509351')) return null;
  try {
    const { functionName, args } = decodeFunctionData({ abi: GRANTS, data: i.callData });
    return { token: i.target, spender: lower(args[0]), amount: args[1], revokes: functionName === 'approve' && args[1] === 0n };
  } catch {
    return null; // not the standard arguments: no allowance through these functions
  }
}

/**
 * Allowances from the settlement go only to known liquidity spenders, unless a later call of the same settlement
 * sets them back to 0: an engine can never leave the settlement's tokens open to an address of its choosing.
 */
function checkAllowances(solution: Solution, known: Set<Address>): void {
  const calls = [...solution.interactions.pre, ...solution.interactions.intra, ...solution.interactions.post];
  calls.forEach((call, n) => {
    const grant = grantOf(call);
    if (!grant || grant.revokes || known.has(grant.spender)) return;
    const revoked = calls.slice(n + 1).some((later) => {
      const g = grantOf(later);
      return g !== null && g.revokes && g.token === grant.token && g.spender === grant.spender;
    });
    if (!revoked) throw new Refusal('fail', `an allowance of ${grant.token} to ${grant.spender}, which is not a known liquidity spender, is left open`);
  });
}

function interactionsOf(wire: SolverSolution, ctx: CheckContext): { intra: Interaction[]; effects: BalanceEffect[] } {
  const intra: Interaction[] = [];
  const effects: BalanceEffect[] = [];
  const reserves = new Map<string, Map<Address, bigint>>();
  const deadline = BigInt(ctx.auction.timestamp + 3600);
  for (const i of wire.interactions) {
    if (i.kind === 'liquidity') {
      const pool = ctx.liquidity.get(i.id);
      if (!pool) throw new Refusal('fail', `liquidity ${i.id} is not in the auction`);
      const input = lower(i.inputToken);
      const output = lower(i.outputToken);
      let r = reserves.get(i.id);
      if (!r) reserves.set(i.id, (r = new Map(Object.entries(pool.tokens).map(([t, v]) => [lower(t), v.balance]))));
      const rin = r.get(input);
      const rout = r.get(output);
      if (rin === undefined || rout === undefined || input === output) throw new Refusal('fail', `liquidity ${i.id} does not trade ${input} for ${output}`);
      const out = getAmountOut(i.inputAmount, rin, rout);
      if (i.inputAmount <= 0n || i.outputAmount > out) throw new Refusal('fail', `liquidity ${i.id}: ${i.inputAmount} in yields at most ${out}, not ${i.outputAmount}`);
      r.set(input, rin + i.inputAmount);
      r.set(output, rout - out);
      intra.push(
        { target: input, value: 0n, callData: encodeFunctionData({ abi: ERC20_APPROVE, functionName: 'approve', args: [pool.router as Address, i.inputAmount] }) },
        { target: lower(pool.router), value: 0n, callData: encodeFunctionData({ abi: ROUTER_SWAP, functionName: 'swapExactTokensForTokens', args: [i.inputAmount, i.outputAmount, [input, output], ctx.settlement, deadline] }) },
      );
      effects.push({ token: input, delta: -i.inputAmount }, { token: output, delta: i.outputAmount });
      continue;
    }
    const target = lower(i.target);
    if (ctx.forbiddenTargets.includes(target)) throw new Refusal('fail', `a custom interaction calls ${target}, which is not allowed`);
    for (const a of i.allowances ?? []) {
      const spender = lower(a.spender);
      if (ctx.forbiddenTargets.includes(spender)) throw new Refusal('fail', `an allowance to ${spender} is not allowed`);
      if (!knownSpenders(ctx).has(spender)) throw new Refusal('fail', `an allowance to ${spender}, which is not a known liquidity spender, is not allowed`);
      intra.push({ target: lower(a.token), value: 0n, callData: encodeFunctionData({ abi: ERC20_APPROVE, functionName: 'approve', args: [spender, a.amount] }) });
    }
    intra.push({ target, value: i.value, callData: i.callData as Hex });
    if (i.value > 0n) effects.push({ token: BUY_ETH_ADDRESS, delta: -i.value });
    for (const a of i.inputs) effects.push({ token: lower(a.token), delta: -a.amount });
    for (const a of i.outputs) effects.push({ token: lower(a.token), delta: a.amount });
  }
  return { intra, effects };
}

/**
 * One solution from several of one engine's valid solutions over distinct orders (as production's driver
 * merges them): trades and interactions one after the other, each trade at its own amounts.
 */
export function mergeSolutions(solutions: Solution[]): Solution | null {
  if (solutions.length < 2) return null;
  const seen = new Set<string>();
  for (const s of solutions) for (const t of s.trades) {
    if (seen.has(t.order.uid)) return null;
    seen.add(t.order.uid);
  }
  return {
    solver: solutions[0].solver,
    trades: solutions.flatMap((s) => s.trades),
    clearingPrices: new Map(),
    interactions: { pre: solutions.flatMap((s) => s.interactions.pre), intra: solutions.flatMap((s) => s.interactions.intra), post: solutions.flatMap((s) => s.interactions.post) },
    interactionEffects: solutions.flatMap((s) => s.interactionEffects),
  };
}
