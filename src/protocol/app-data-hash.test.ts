import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak256 } from 'viem';
import { EMPTY_APP_DATA_HASH, EMPTY_APP_DATA_JSON, ZERO_APP_DATA, appDataHash } from './app-data-hash.js';

describe('app data hash (§6.8)', () => {
  it('hashes {} to the reference value', () => {
    assert.equal(EMPTY_APP_DATA_JSON, '{}');
    assert.equal(appDataHash('{}'), '0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d');
    assert.equal(EMPTY_APP_DATA_HASH, appDataHash(EMPTY_APP_DATA_JSON));
  });

  it('hashes the exact text: whitespace and key order change the hash', () => {
    assert.notEqual(appDataHash('{ }'), appDataHash('{}'));
    assert.notEqual(appDataHash('{"a":1,"b":2}'), appDataHash('{"b":2,"a":1}'));
  });

  it('hashes UTF-8 bytes, not UTF-16 code units', () => {
    assert.equal(appDataHash('\u00e9'), keccak256(new Uint8Array([0xc3, 0xa9])));
    assert.equal(appDataHash('\u{1f42e}'), keccak256(new Uint8Array([0xf0, 0x9f, 0x90, 0xae])));
  });

  it('the zero app data is 32 zero bytes', () => {
    assert.equal(ZERO_APP_DATA, `0x${'0'.repeat(64)}`);
  });
});
