/**
 * Order hooks (app-data `metadata.hooks`) as the protocol runs them: the one place that reads an order's hooks
 * from its app-data document, adds up their gas, wraps them into a call of our HooksTrampoline (the settlement
 * calls the trampoline, the trampoline calls each hook with its gas limit), and recognises an EIP-2612 permit
 * pre-hook that grants the vault relayer an allowance.
 *
 * @example
 *   const hooks = orderHooksOf(documentText);                // { pre: [...], post: [...] } (empty if unreadable)
 *   const gas = hookGas(hooks);                              // Σ gasLimit
 *   const call = trampolineInteraction(trampoline, uid, 'pre', hooks.pre); // a settlement pre-interaction
 */
import { decodeFunctionData, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { parseAppDataDocument, type AppDataHook } from './app-data-document.js';
import type { SettlementInteraction } from './encode-settle.js';

export type HookType = 'pre' | 'post';

export interface OrderHooks {
  readonly pre: readonly AppDataHook[];
  readonly post: readonly AppDataHook[];
}

export const NO_ORDER_HOOKS: OrderHooks = { pre: [], post: [] };

/** Upstream order-book rule: quote gas + hook gas + EIP-1271 verification gas of one order at most this (`TooMuchGas`). */
export const MAX_ORDER_GAS = 8_000_000n;

/** What the trampoline itself spends around the hooks: the call from the settlement, the loop, one event per hook. */
export const TRAMPOLINE_BASE_GAS = 30_000n;
export const TRAMPOLINE_GAS_PER_HOOK = 12_000n;

export const HOOKS_TRAMPOLINE_ABI = parseAbi([
  'struct Hook { address target; bytes callData; uint256 gasLimit; }',
  'function execute(bytes orderUid, uint8 hookType, Hook[] hooks)',
  'event HookExecuted(bytes orderUid, uint8 hookType, uint256 index, address indexed target, uint256 gasLimit, bool success)',
  'error NotASettlement()',
  'error NotEnoughGas(uint256 index)',
]);

const PERMIT_ABI = parseAbi(['function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)']);

/** The hooks of an app-data document; none when the document is unreadable (it was validated when stored). */
export function orderHooksOf(documentText: string | null | undefined): OrderHooks {
  if (documentText === null || documentText === undefined) return NO_ORDER_HOOKS;
  try {
    return parseAppDataDocument(documentText).protocol.hooks;
  } catch {
    return NO_ORDER_HOOKS;
  }
}

/** Σ gas limits of the hooks. */
export function hookGas(hooks: OrderHooks): bigint {
  return [...hooks.pre, ...hooks.post].reduce((sum, h) => sum + h.gasLimit, 0n);
}

/** Gas a settlement spends to run a list of hooks through the trampoline (their limits plus the trampoline's own). */
export function trampolineGas(hooks: readonly AppDataHook[]): bigint {
  if (hooks.length === 0) return 0n;
  return TRAMPOLINE_BASE_GAS + hooks.reduce((sum, h) => sum + h.gasLimit + TRAMPOLINE_GAS_PER_HOOK, 0n);
}

/** `trampoline.execute(orderUid, hookType, hooks)` as a settlement interaction. */
export function trampolineInteraction(trampoline: Address, orderUid: Hex, type: HookType, hooks: readonly AppDataHook[]): SettlementInteraction {
  return {
    target: trampoline,
    value: 0n,
    callData: encodeFunctionData({
      abi: HOOKS_TRAMPOLINE_ABI,
      functionName: 'execute',
      args: [orderUid, type === 'pre' ? 0 : 1, hooks.map((h) => ({ target: h.target, callData: h.callData, gasLimit: h.gasLimit }))],
    }),
  };
}

export interface PermitHook {
  /** the token the permit is for (the hook's target) */
  token: Address;
  owner: Address;
  spender: Address;
  value: bigint;
  deadline: bigint;
  /** the hook itself, to simulate it */
  hook: AppDataHook;
}

/** The EIP-2612 `permit(owner, spender, value, deadline, v, r, s)` calls among the hooks (addresses lowercase). */
export function permitHooks(hooks: readonly AppDataHook[]): PermitHook[] {
  const found: PermitHook[] = [];
  for (const hook of hooks) {
    try {
      const { args } = decodeFunctionData({ abi: PERMIT_ABI, data: hook.callData });
      const [owner, spender, value, deadline] = args;
      found.push({ token: hook.target.toLowerCase() as Address, owner: owner.toLowerCase() as Address, spender: spender.toLowerCase() as Address, value, deadline, hook });
    } catch {
      // not a permit
    }
  }
  return found;
}

/**
 * The allowance an order's pre-hooks grant `spender` for `owner` in `token`, as they claim it (the largest
 * permit that names them and is not past `now`), or null. Whether the permit really works is for the caller to
 * simulate.
 */
export function permitGrant(hooks: readonly AppDataHook[], owner: Address, token: Address, spender: Address, now: number): PermitHook | null {
  let best: PermitHook | null = null;
  for (const p of permitHooks(hooks)) {
    if (p.owner !== owner.toLowerCase() || p.token !== token.toLowerCase() || p.spender !== spender.toLowerCase()) continue;
    if (p.deadline < BigInt(now)) continue;
    if (!best || p.value > best.value) best = p;
  }
  return best;
}
