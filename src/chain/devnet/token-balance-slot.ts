// Setting an ERC-20 balance on a fork by writing the storage word `balanceOf` really reads — for any layout:
// balances behind a proxy (the word is in the proxy's storage), `balanceOf` reading other words first (pause flags,
// configuration), mappings at any slot and in Solidity or Vyper key order. Nothing about the layout is guessed:
// the candidate words come from the access list of a `balanceOf(holder)` call, each is tried with a marker value
// and kept only if `balanceOf` then returns exactly that marker (the others are restored), and the final write is
// verified. Tokens whose balances are computed (rebasing, shares) have no such word: they are refused.
//
//   await setTokenBalance(rpc, usdc, trader, 250_000n * 10n ** 6n);   // throws TokenBalanceSlotError if impossible
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { devnetTokenAbi } from './abis.js';
import type { DevnetRpc } from './rpc.js';

export class TokenBalanceSlotError extends Error {
  constructor(
    readonly token: Address,
    message: string,
  ) {
    super(message);
    this.name = 'TokenBalanceSlotError';
  }
}

/** A value no real balance holds by chance: `balanceOf` returning it proves the word was the one read. */
const MARKER = 0x5eed_c0ffee_1234_5678_9abc_def0_0fed_cba9n;

const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`;

async function balanceOf(rpc: DevnetRpc, token: Address, holder: Address): Promise<bigint | null> {
  const data = encodeFunctionData({ abi: devnetTokenAbi, functionName: 'balanceOf', args: [holder] });
  try {
    const out = await rpc.request<Hex>('eth_call', [{ to: token, data }, 'latest']);
    return out.length >= 66 ? BigInt(out.slice(0, 66)) : null;
  } catch {
    return null;
  }
}

/** Where `token` keeps `holder`'s balance: the contract whose storage holds it and the word's key. */
export interface BalanceWord {
  address: Address;
  slot: Hex;
}

/** Finds the storage word `balanceOf(holder)` reads and returns, by trying each word the call accesses. */
export async function findBalanceWord(rpc: DevnetRpc, token: Address, holder: Address): Promise<BalanceWord> {
  const data = encodeFunctionData({ abi: devnetTokenAbi, functionName: 'balanceOf', args: [holder] });
  let list: { accessList: Array<{ address: Address; storageKeys: Hex[] }> };
  try {
    list = await rpc.request('eth_createAccessList', [{ to: token, data }, 'latest']);
  } catch (err) {
    throw new TokenBalanceSlotError(token, `token ${token}: balanceOf(${holder}) cannot be traced: ${(err as Error).message}`);
  }
  // the token's own storage first (proxies keep balances there), the last keys first (the balance is read last)
  const candidates = list.accessList
    .slice()
    .sort((a, b) => Number(b.address.toLowerCase() === token.toLowerCase()) - Number(a.address.toLowerCase() === token.toLowerCase()))
    .flatMap((entry) => entry.storageKeys.slice().reverse().map((slot) => ({ address: entry.address, slot })));
  for (const candidate of candidates) {
    const previous = await rpc.request<Hex>('eth_getStorageAt', [candidate.address, candidate.slot, 'latest']);
    await rpc.request('anvil_setStorageAt', [candidate.address, candidate.slot, word(MARKER)]);
    const seen = await balanceOf(rpc, token, holder);
    await rpc.request('anvil_setStorageAt', [candidate.address, candidate.slot, word(BigInt(previous))]);
    if (seen === MARKER) return candidate;
  }
  throw new TokenBalanceSlotError(
    token,
    `token ${token}: no storage word holds the balance balanceOf(${holder}) returns (${candidates.length} tried; a rebasing or share-based token?)`,
  );
}

/**
 * Sets `holder`'s balance of `token` to `amount` (base units) on a fork or devnet, and verifies it. The total supply
 * is not adjusted (no layout is guessed for it either).
 */
export async function setTokenBalance(rpc: DevnetRpc, token: Address, holder: Address, amount: bigint): Promise<void> {
  if (amount < 0n || amount >= 2n ** 256n) throw new RangeError(`balance out of range: ${amount}`);
  const { address, slot } = await findBalanceWord(rpc, token, holder);
  await rpc.request('anvil_setStorageAt', [address, slot, word(amount)]);
  const seen = await balanceOf(rpc, token, holder);
  if (seen !== amount) throw new TokenBalanceSlotError(token, `token ${token}: wrote ${amount} for ${holder} but balanceOf returns ${seen ?? 'nothing'}`);
}
