import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { RecentQuotes, type RecentQuote } from './recent-quotes.js';

const WETH = '0x0101010101010101010101010101010101010101' as Address;
const USDC = '0x0202020202020202020202020202020202020202' as Address;

function held(id: number, expiresAt: number): RecentQuote {
  return {
    sellToken: WETH, buyToken: USDC, kind: 'sell', expiresAt,
    quote: { id, sellAmount: 10n ** 18n, buyAmount: 3000n, feeAmount: 5n, gasAmount: 180_000n, gasPrice: 7n, sellTokenPrice: 1, solver: 'amm', verified: false },
  };
}

describe('RecentQuotes', () => {
  it('holds the quotes remembered, by id', () => {
    const recent = new RecentQuotes();
    recent.remember(held(1, 60_000));
    recent.remember(held(2, 60_000));
    assert.equal(recent.get(1)?.quote.id, 1);
    assert.equal(recent.get(2)?.quote.buyAmount, 3000n);
    assert.equal(recent.get(3), undefined, 'never stored here: ask the database');
  });

  it('forgets the oldest beyond its bound, and the expired ones when told', () => {
    const recent = new RecentQuotes(2);
    recent.remember(held(1, 10_000));
    recent.remember(held(2, 20_000));
    recent.remember(held(3, 30_000));
    assert.equal(recent.get(1), undefined, 'the oldest went first');
    assert.equal(recent.size, 2);
    recent.forgetExpired(25_000);
    assert.equal(recent.get(2), undefined, 'expired at 20 s');
    assert.equal(recent.get(3)?.quote.id, 3, 'still valid at 25 s');
  });
});
