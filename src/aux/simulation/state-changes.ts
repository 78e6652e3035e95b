/**
 * Pure bookkeeping of what a transaction changed, from the data a node gives back:
 * - storage changes and native balance changes from a `prestateTracer` trace in diff mode (`{pre, post}`),
 *   read with geth's semantics: `pre` holds the prior values of the accounts the transaction modified, `post`
 *   only the fields that changed; a slot present in `pre` and missing in `post` was cleared to zero, an account
 *   present in `pre` and missing in `post` was deleted;
 * - ERC-20 balance changes from the receipt's logs: `Transfer(address,address,uint256)` with both addresses
 *   indexed (ERC-721 transfers, with an indexed token id, are not amounts and are skipped), plus `Deposit` /
 *   `Withdrawal` of the chain's wrapped native token (minting and burning it without a Transfer event). The zero
 *   address is not a holder: mints and burns change only the other side.
 * - adding such changes up across the transactions of a bundle.
 *
 * @example
 *   const storage = storageChangesFromPrestate(trace);
 *   const tokens = tokenChangesFromLogs(receipt.logs, weth);
 *   const total = new Map(); addBalanceChanges(total, tokens);
 *   balanceChangesJson(total) // { '0xabc…': { '0xtoken…': '-5' } }
 */
import { toEventSelector, zeroAddress, type Address, type Hex } from 'viem';
import { NATIVE_ASSET, type BalanceChanges, type StorageChange } from './types.js';

export interface PrestateAccount {
  balance?: Hex;
  nonce?: number;
  code?: Hex;
  storage?: Record<string, Hex>;
}

export interface PrestateDiff {
  pre: Record<string, PrestateAccount>;
  post: Record<string, PrestateAccount>;
}

export interface LogEntry {
  address: string;
  topics: readonly string[];
  data: string;
}

const TRANSFER = toEventSelector('Transfer(address,address,uint256)');
const DEPOSIT = toEventSelector('Deposit(address,uint256)');
const WITHDRAWAL = toEventSelector('Withdrawal(address,uint256)');
const ZERO_WORD: Hex = `0x${'0'.repeat(64)}`;

/** A 32-byte word as lowercase 0x + 64 hex digits. */
export function word(value: string | bigint): Hex {
  const big = typeof value === 'bigint' ? value : BigInt(value === '0x' || value === '' ? 0 : value);
  return `0x${big.toString(16).padStart(64, '0')}`;
}

const lower = (a: string) => a.toLowerCase() as Address;

function topicAddress(topic: string): Address {
  return `0x${topic.slice(-40)}`.toLowerCase() as Address;
}

/** Storage slots whose value differs after the transaction, sorted by address then key. */
export function storageChangesFromPrestate(diff: PrestateDiff): StorageChange[] {
  const out: StorageChange[] = [];
  const pre = byAddress(diff.pre);
  const post = byAddress(diff.post);
  for (const address of new Set([...pre.keys(), ...post.keys()])) {
    const before = new Map(Object.entries(pre.get(address)?.storage ?? {}).map(([k, v]) => [word(k), word(v)]));
    const after = new Map(Object.entries(post.get(address)?.storage ?? {}).map(([k, v]) => [word(k), word(v)]));
    for (const key of new Set([...before.keys(), ...after.keys()])) {
      const original = before.get(key) ?? ZERO_WORD;
      const updated = after.get(key) ?? ZERO_WORD;
      if (original !== updated) out.push({ address, key, original, updated });
    }
  }
  return sortStorageChanges(out);
}

function byAddress(side: Record<string, PrestateAccount> | undefined): Map<Address, PrestateAccount> {
  return new Map(Object.entries(side ?? {}).map(([a, v]) => [lower(a), v ?? {}]));
}

/** Native balance change per account (post − pre), zero changes left out. Gas is included: see the caller. */
export function nativeChangesFromPrestate(diff: PrestateDiff): Map<Address, bigint> {
  const out = new Map<Address, bigint>();
  const pre = byAddress(diff.pre);
  const post = byAddress(diff.post);
  for (const address of new Set([...pre.keys(), ...post.keys()])) {
    const before = pre.has(address) ? BigInt(pre.get(address)!.balance ?? 0) : 0n;
    let after: bigint;
    if (post.has(address)) {
      const balance = post.get(address)!.balance;
      after = balance === undefined ? before : BigInt(balance);
    } else {
      after = 0n; // in pre only: the account was deleted
    }
    if (after !== before) out.set(address, after - before);
  }
  return out;
}

/** ERC-20 balance changes from a transaction's logs (see the module comment). */
export function tokenChangesFromLogs(logs: readonly LogEntry[], wrappedNative: Address | null): BalanceChanges {
  const out: BalanceChanges = new Map();
  const weth = wrappedNative ? lower(wrappedNative) : null;
  for (const log of logs) {
    const topic0 = log.topics[0]?.toLowerCase();
    const token = lower(log.address);
    const amount = (): bigint | null => {
      // exactly one 32-byte word of data: anything else is not the event we know
      if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) return null;
      return BigInt(log.data);
    };
    if (topic0 === TRANSFER && log.topics.length === 3) {
      const value = amount();
      if (value === null || value === 0n) continue;
      const from = topicAddress(log.topics[1]!);
      const to = topicAddress(log.topics[2]!);
      if (from !== zeroAddress) addAmount(out, from, token, -value);
      if (to !== zeroAddress) addAmount(out, to, token, value);
    } else if (weth !== null && token === weth && log.topics.length === 2 && (topic0 === DEPOSIT || topic0 === WITHDRAWAL)) {
      const value = amount();
      if (value === null || value === 0n) continue;
      addAmount(out, topicAddress(log.topics[1]!), token, topic0 === DEPOSIT ? value : -value);
    }
  }
  return out;
}

export function addAmount(changes: BalanceChanges, holder: Address, token: Address, amount: bigint): void {
  if (amount === 0n) return;
  const h = lower(holder);
  const t = lower(token);
  let byToken = changes.get(h);
  if (!byToken) changes.set(h, (byToken = new Map()));
  byToken.set(t, (byToken.get(t) ?? 0n) + amount);
}

/** target += source */
export function addBalanceChanges(target: BalanceChanges, source: BalanceChanges): void {
  for (const [holder, byToken] of source) for (const [token, amount] of byToken) addAmount(target, holder, token, amount);
}

/** Native changes as balance changes under the 0xeeee… key. */
export function nativeAsBalanceChanges(native: Map<Address, bigint>): BalanceChanges {
  const out: BalanceChanges = new Map();
  for (const [holder, amount] of native) addAmount(out, holder, NATIVE_ASSET, amount);
  return out;
}

/** `{[holder]: {[token]: signed decimal}}`, holders and tokens sorted, zero entries (netted out) left out. */
export function balanceChangesJson(changes: BalanceChanges): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const holder of [...changes.keys()].sort()) {
    const byToken = changes.get(holder)!;
    const entries = [...byToken.entries()].filter(([, v]) => v !== 0n).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (entries.length > 0) out[holder] = Object.fromEntries(entries.map(([t, v]) => [t, v.toString(10)]));
  }
  return out;
}

/**
 * The net storage changes of several transactions run in sequence: per (address, key) the value before the
 * first change and after the last; slots that end where they started are left out.
 */
export function mergeStorageChanges(sequence: readonly StorageChange[][]): StorageChange[] {
  const merged = new Map<string, StorageChange>();
  for (const changes of sequence) {
    for (const c of changes) {
      const id = `${c.address}:${c.key}`;
      const prior = merged.get(id);
      merged.set(id, prior ? { ...prior, updated: c.updated } : { ...c });
    }
  }
  return sortStorageChanges([...merged.values()].filter((c) => c.original !== c.updated));
}

function sortStorageChanges(list: StorageChange[]): StorageChange[] {
  return list.sort((a, b) => (a.address === b.address ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.address < b.address ? -1 : 1));
}
