/** The bad-token detector (issue 19, major 9): blamed in three auctions within the window, a token is out for a while. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { BadTokenDetector } from './bad-tokens.js';

const SHADY = '0x00000000000000000000000000000000000000Ad' as Address;
const WETH = '0x00000000000000000000000000000000000000e1' as Address;

describe('bad-token detector', () => {
  it('holds a token out once it is blamed in three auctions within the window, until the ban ends', () => {
    const d = new BadTokenDetector({ threshold: 3, windowBlocks: 50, banBlocks: 200 });
    assert.deepEqual(d.blame([SHADY, WETH], 1, 100), []);
    assert.deepEqual(d.blame([SHADY], 1, 100), [], 'the same auction counts once');
    assert.deepEqual(d.blame([SHADY], 2, 110), []);
    assert.equal(d.isBad(SHADY, 110), false);
    assert.deepEqual(d.blame([SHADY, SHADY], 3, 120), [SHADY.toLowerCase()]);
    assert.equal(d.isBad(SHADY, 121), true);
    assert.deepEqual([...d.bad(121)], [SHADY.toLowerCase()]);
    assert.equal(d.isBad(WETH, 121), false, 'blamed once only');
    assert.equal(d.isBad(SHADY, 320), false, 'the ban ends');
    assert.deepEqual([...d.bad(320)], []);
  });

  it('forgets blames older than the window', () => {
    const d = new BadTokenDetector({ threshold: 3, windowBlocks: 50 });
    d.blame([SHADY], 1, 100);
    d.blame([SHADY], 2, 140);
    assert.deepEqual(d.blame([SHADY], 3, 160), [], 'the first blame is outside the window');
    assert.deepEqual(d.blame([SHADY], 4, 170), [SHADY.toLowerCase()]);
  });
});
