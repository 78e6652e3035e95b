import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, pad, toEventSelector, type Address, type Hex } from 'viem';
import {
  addBalanceChanges,
  balanceChangesJson,
  mergeStorageChanges,
  nativeChangesFromPrestate,
  storageChangesFromPrestate,
  tokenChangesFromLogs,
  word,
} from './state-changes.js';
import { NATIVE_ASSET, type BalanceChanges } from './types.js';

const A = '0x00000000000000000000000000000000000000aa' as Address;
const B = '0x00000000000000000000000000000000000000bb' as Address;
const TOKEN = '0x00000000000000000000000000000000000000cc' as Address;
const WETH = '0x00000000000000000000000000000000000000dd' as Address;
const ZERO = '0x0000000000000000000000000000000000000000' as Address;
const amount = (v: bigint) => encodeAbiParameters([{ type: 'uint256' }], [v]);
const topic = (a: Address) => pad(a, { size: 32 });
const TRANSFER = toEventSelector('Transfer(address,address,uint256)');

describe('storageChangesFromPrestate', () => {
  it('reads new, changed and cleared slots and skips unchanged ones', () => {
    const changes = storageChangesFromPrestate({
      pre: {
        [TOKEN.toUpperCase().replace('0X', '0x')]: { balance: '0x0', storage: { '0x01': '0x05', '0x02': '0x07', '0x03': '0x09' } },
      },
      post: { [TOKEN]: { storage: { '0x02': '0x08', '0x04': '0x01', '0x03': '0x09' } } },
    });
    assert.deepEqual(changes, [
      { address: TOKEN, key: word(1n), original: word(5n), updated: word(0n) },
      { address: TOKEN, key: word(2n), original: word(7n), updated: word(8n) },
      { address: TOKEN, key: word(4n), original: word(0n), updated: word(1n) },
    ]);
  });
  it('treats an account missing from post as deleted', () => {
    const changes = storageChangesFromPrestate({ pre: { [A]: { storage: { '0x01': '0x02' } } }, post: {} });
    assert.deepEqual(changes, [{ address: A, key: word(1n), original: word(2n), updated: word(0n) }]);
  });
});

describe('nativeChangesFromPrestate', () => {
  it('takes post − pre, unchanged balances and new accounts included correctly', () => {
    const native = nativeChangesFromPrestate({
      pre: { [A]: { balance: '0x100', nonce: 1 }, [TOKEN]: { balance: '0x5' } },
      post: { [A]: { balance: '0xf0', nonce: 2 }, [B]: { balance: '0x10' }, [TOKEN]: { storage: { '0x1': '0x1' } } },
    });
    assert.deepEqual([...native.entries()], [
      [A, -0x10n],
      [B, 0x10n],
    ]);
  });
});

describe('tokenChangesFromLogs', () => {
  it('counts ERC-20 transfers, skips ERC-721 ones, mints/burns touch only the holder', () => {
    const logs = [
      { address: TOKEN, topics: [TRANSFER, topic(A), topic(B)], data: amount(10n) },
      { address: TOKEN, topics: [TRANSFER, topic(ZERO), topic(A)], data: amount(3n) },
      { address: TOKEN, topics: [TRANSFER, topic(B), topic(ZERO)], data: amount(1n) },
      // ERC-721: token id indexed, no data
      { address: TOKEN, topics: [TRANSFER, topic(A), topic(B), amount(7n)], data: '0x' },
    ];
    assert.deepEqual(balanceChangesJson(tokenChangesFromLogs(logs, null)), {
      [A]: { [TOKEN]: '-7' },
      [B]: { [TOKEN]: '9' },
    });
  });
  it('counts Deposit/Withdrawal of the wrapped native token only', () => {
    const deposit = toEventSelector('Deposit(address,uint256)');
    const withdrawal = toEventSelector('Withdrawal(address,uint256)');
    const logs = [
      { address: WETH, topics: [deposit, topic(A)], data: amount(100n) },
      { address: WETH, topics: [withdrawal, topic(A)], data: amount(40n) },
      { address: TOKEN, topics: [deposit, topic(A)], data: amount(999n) },
    ];
    assert.deepEqual(balanceChangesJson(tokenChangesFromLogs(logs, WETH)), { [A]: { [WETH]: '60' } });
    assert.deepEqual(balanceChangesJson(tokenChangesFromLogs(logs, null)), {});
  });
});

describe('adding up', () => {
  it('nets balance changes and drops zero entries', () => {
    const total: BalanceChanges = new Map();
    addBalanceChanges(total, new Map([[A, new Map([[TOKEN, -5n], [NATIVE_ASSET, 2n]])]]));
    addBalanceChanges(total, new Map([[A, new Map([[TOKEN, 5n]])], [B, new Map([[TOKEN, 1n]])]]));
    assert.deepEqual(balanceChangesJson(total), { [A]: { [NATIVE_ASSET]: '2' }, [B]: { [TOKEN]: '1' } });
  });
  it('merges storage changes: first original, last updated, round trips dropped', () => {
    const k1 = word(1n);
    const k2 = word(2n);
    const w = (n: bigint): Hex => word(n);
    const merged = mergeStorageChanges([
      [{ address: A, key: k1, original: w(1n), updated: w(2n) }, { address: A, key: k2, original: w(0n), updated: w(9n) }],
      [{ address: A, key: k1, original: w(2n), updated: w(3n) }, { address: A, key: k2, original: w(9n), updated: w(0n) }],
    ]);
    assert.deepEqual(merged, [{ address: A, key: k1, original: w(1n), updated: w(3n) }]);
  });
});
