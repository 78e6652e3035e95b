/**
 * Property-based: random malformed quote and order bodies always get a 4xx in the order-book envelope,
 * never a 5xx (fast-check against the real server on the devnet).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestApp, type TestApp } from './fixtures/app.js';
import { call } from './fixtures/orders.js';

describe('fuzzing order-book bodies', () => {
  let app: TestApp;
  let tokens: string[];
  let trader: string;
  before(async () => {
    app = await startTestApp();
    const d = app.devnet!.describe();
    tokens = d.tokens.map((t) => t.address);
    trader = d.accounts[0]!.address;
  });
  after(async () => {
    await app?.stop();
  });

  const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => '0x' + Buffer.from(b).toString('hex'));
  const junk = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(''),
    fc.constant('-1'),
    fc.constant('1e18'),
    fc.constant('0x10'),
    fc.constant('9'.repeat(90)),
    hex(20),
    hex(65),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  );

  /** A plausible body with some fields replaced by junk or dropped. */
  function mutated(base: () => Record<string, unknown>) {
    return fc
      .tuple(fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 20 }), junk), { maxLength: 3 }), fc.array(fc.nat(), { maxLength: 4 }), fc.array(fc.tuple(fc.nat(), junk), { maxLength: 4 }))
      .map(([extra, drops, replaces]) => {
        const body: Record<string, unknown> = base();
        const keys = Object.keys(body);
        for (const d of drops) delete body[keys[d % keys.length]!];
        for (const [i, v] of replaces) body[keys[i % keys.length]!] = v;
        for (const [k, v] of extra) body[k] = v;
        return body;
      });
  }

  const quoteBase = () => ({ sellToken: tokens[0], buyToken: tokens[1], from: trader, kind: 'sell', sellAmountBeforeFee: '1000000000000000000', validFor: 600, appData: '{}' });
  const orderBase = () => ({
    sellToken: tokens[0], buyToken: tokens[1], receiver: trader, sellAmount: '1000000000000000', buyAmount: '1', validTo: Math.floor(Date.now() / 1000) + 600,
    appData: '0x' + '00'.repeat(32), feeAmount: '0', kind: 'sell', partiallyFillable: false, sellTokenBalance: 'erc20', buyTokenBalance: 'erc20',
    signingScheme: 'eip712', signature: '0x' + '11'.repeat(65), from: trader,
  });

  for (const [name, path, base] of [
    ['quote', '/devnet/api/v1/quote', quoteBase],
    ['order', '/devnet/api/v1/orders', orderBase],
  ] as const) {
    it(`malformed ${name} bodies get a 4xx envelope, never a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(mutated(base), junk), async (body) => {
          const res = await call(app.baseUrl, 'POST', path, JSON.stringify(body));
          assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
          if (res.status >= 400) {
            assert.equal(typeof res.body.errorType, 'string', JSON.stringify(res.body));
            assert.equal(typeof res.body.description, 'string');
          } else if (name === 'order') {
            // every generated order carries a garbage signature: accepting one is a hole, not a pass
            assert.fail(`order accepted (${res.status}) with a signature nobody made: ${JSON.stringify(body)}`);
          } else {
            // a mutation can leave a valid quote request; then the answer must be a real quote
            assert.equal(res.status, 200, JSON.stringify(res.body));
            assert.match(String(res.body.quote?.sellAmount), /^\d+$/, JSON.stringify(res.body));
            assert.match(String(res.body.quote?.buyAmount), /^\d+$/, JSON.stringify(res.body));
          }
        }),
        { numRuns: 150 },
      );
    });
  }

  it('random bytes as a body get a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        const res = await fetch(`${app.baseUrl}/devnet/api/v1/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes });
        assert.ok(res.status >= 400 && res.status < 500, String(res.status));
      }),
      { numRuns: 50 },
    );
  });
});
