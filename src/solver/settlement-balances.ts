/**
 * What a settlement does to the settlement contract's own tokens (issue 19): one `eth_simulateV1` block reads
 * `balanceOf(settlement)` of every token the solution touches, runs the settle call from the solver account, and
 * reads the balances again. A solution may move tokens through the settlement, but it must leave it with no less of
 * any of them than it had: the trades' payouts are covered by what the trades and the interactions bring in. So a
 * custom interaction that takes the settlement's buffers (say `WETH.transfer(attacker, x)`, declared as nothing)
 * fails the simulation however well it scores.
 *
 * Tokens touched: the traded tokens (not native ETH), the tokens of the declared interaction effects, and every
 * interaction's target (a call on a token is how its balance moves); a target whose `balanceOf` fails is not a token.
 *
 * @example
 *   const r = await settlementBalanceChanges(client, { settlement, from: solver, data, tokens: touchedTokens(solution) });
 *   if (r.settled && r.decreases.length > 0) refuse(r.decreases);
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import type { ChainClient } from '../chain/client.js';
import { BUY_ETH_ADDRESS } from '../protocol/index.js';
import type { Solution } from './solution.js';

const BALANCE_OF = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
/** tokens checked at most (a settlement touching more cannot be checked: it is refused) */
export const MAX_CHECKED_TOKENS = 256;

const lower = (a: string): Address => a.toLowerCase() as Address;

/** Every token whose settlement balance the solution may move (see the module comment), deduplicated. */
export function touchedTokens(solution: Solution): Address[] {
  const tokens = new Set<Address>();
  for (const t of solution.trades) tokens.add(t.order.sellToken).add(t.order.buyToken);
  for (const e of solution.interactionEffects) tokens.add(lower(e.token));
  const { pre, intra, post } = solution.interactions;
  for (const i of [...pre, ...intra, ...post]) tokens.add(lower(i.target));
  tokens.delete(lower(BUY_ETH_ADDRESS));
  return [...tokens].sort();
}

export interface BalanceDecrease {
  token: Address;
  before: bigint;
  after: bigint;
}

export type BalanceCheck =
  /** the settle call reverted in the simulation (the caller asks the node why with a plain call) */
  | { settled: false }
  | { settled: true; decreases: BalanceDecrease[] };

export async function settlementBalanceChanges(client: ChainClient, call: { settlement: Address; from: Address; data: Hex; tokens: Address[] }): Promise<BalanceCheck> {
  if (call.tokens.length > MAX_CHECKED_TOKENS) throw new Error(`the settlement touches ${call.tokens.length} contracts, at most ${MAX_CHECKED_TOKENS} are checked`);
  const read = call.tokens.map((token) => ({ to: token, data: encodeFunctionData({ abi: BALANCE_OF, functionName: 'balanceOf', args: [call.settlement] }) }));
  const [block] = await client.simulateBlocks({ blocks: [{ calls: [...read, { account: call.from, to: call.settlement, data: call.data }, ...read] }] });
  const results = block!.calls;
  const n = call.tokens.length;
  if (results[n]!.status !== 'success') return { settled: false };
  const balance = (r: (typeof results)[number]): bigint | null => {
    if (r.status !== 'success' || !r.data || r.data.length !== 66) return null;
    return decodeFunctionResult({ abi: BALANCE_OF, functionName: 'balanceOf', data: r.data });
  };
  const decreases: BalanceDecrease[] = [];
  call.tokens.forEach((token, i) => {
    const before = balance(results[i]!);
    const after = balance(results[n + 1 + i]!);
    if (before !== null && after !== null && after < before) decreases.push({ token, before, after });
  });
  return { settled: true, decreases };
}
