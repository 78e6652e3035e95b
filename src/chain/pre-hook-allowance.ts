/**
 * The vault-relayer allowance an order's pre-hooks grant: an EIP-2612 `permit(owner, vaultRelayer, value, ...)`
 * on the sell token among the pre-hooks, checked by simulating it from the hooks trampoline (the account that
 * will make the call in the settlement) with the hook's gas limit. Used by order intake and by the auction so
 * both judge an order that approves through its pre-hook the same way.
 *
 * @example
 *   const granted = await preHookAllowance(reader, { hooks: doc.protocol.hooks.pre, owner, token, spender: vaultRelayer, trampoline, now });
 *   const allowance = onChainAllowance > granted ? onChainAllowance : granted;
 */
import type { Address } from 'viem';
import { permitGrant, type AppDataHook } from '../protocol/index.js';
import type { ChainReader, ReadOptions } from './reader.js';

export interface PreHookAllowanceRequest {
  hooks: readonly AppDataHook[];
  owner: Address;
  token: Address;
  /** the vault relayer */
  spender: Address;
  /** the trampoline that runs the hooks; null: hooks do not run on this chain, nothing is granted */
  trampoline: Address | null;
  /** unix seconds: a permit past its deadline grants nothing */
  now: number;
}

/** The allowance the pre-hooks would grant (0 when none would, or when the permit does not simulate). */
export async function preHookAllowance(reader: Pick<ChainReader, 'callSucceeds'>, request: PreHookAllowanceRequest, options: ReadOptions = {}): Promise<bigint> {
  if (request.trampoline === null || request.hooks.length === 0) return 0n;
  const grant = permitGrant(request.hooks, request.owner, request.token, request.spender, request.now);
  if (!grant) return 0n;
  const works = await reader.callSucceeds({ from: request.trampoline, to: grant.token, data: grant.hook.callData, gas: grant.hook.gasLimit }, options);
  return works ? grant.value : 0n;
}
