/**
 * The external estimator against a local HTTP server that speaks a compatible order book's quote format
 * (the only fake: a provider we do not own), and the best-of combinator in front of it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OrderBookError } from '../../protocol/order-book-error.js';
import { BestOfEstimators, ExternalOrderBookEstimator, ProviderUnavailableError } from './external-orderbook-estimator.js';
import type { TradeEstimator } from './trade-estimator.js';

const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';

describe('external order-book estimator', () => {
  let server: Server;
  let base: string;
  let mode: 'ok' | 'noLiquidity' | 'error' | 'junk' | 'hang' = 'ok';
  const seen: any[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url, body: JSON.parse(body || '{}') });
        if (mode === 'hang') return;
        res.setHeader('content-type', 'application/json');
        if (mode === 'ok') {
          const q = JSON.parse(body);
          res.end(JSON.stringify({ quote: { sellAmount: q.sellAmountAfterFee ?? '777', buyAmount: q.buyAmountAfterFee ?? '5000', feeAmount: '3', gasAmount: '123456.0', kind: q.kind }, verified: true, id: null }));
        } else if (mode === 'noLiquidity') {
          res.statusCode = 404;
          res.end(JSON.stringify({ errorType: 'NoLiquidity', description: 'no route' }));
        } else if (mode === 'error') {
          res.statusCode = 503;
          res.end(JSON.stringify({ errorType: 'InternalServerError', description: '' }));
        } else res.end('<html>');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mainnet`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const estimator = () => new ExternalOrderBookEstimator({ baseUrl: base, timeoutMs: 300, from: A });

  it('sends a fast quote request and reads the amount and gas', async () => {
    mode = 'ok';
    const sell = await estimator().estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1000n });
    assert.deepEqual(sell, { outAmount: 5000n, gas: 123456n, solver: 'external-orderbook', verified: true });
    const last = seen.at(-1);
    assert.equal(last.url, '/mainnet/api/v1/quote');
    assert.equal(last.body.priceQuality, 'fast');
    assert.equal(last.body.sellAmountAfterFee, '1000');
    const buy = await estimator().estimate({ sellToken: A, buyToken: B, kind: 'buy', amount: 42n });
    assert.equal(buy.outAmount, 777n);
  });

  it('maps no liquidity to NoLiquidity, and failures/junk/timeouts to ProviderUnavailableError', async () => {
    mode = 'noLiquidity';
    await assert.rejects(estimator().estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1n }), (e: unknown) => e instanceof OrderBookError && e.errorType === 'NoLiquidity');
    for (const m of ['error', 'junk', 'hang'] as const) {
      mode = m;
      await assert.rejects(estimator().estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1n }), ProviderUnavailableError, m);
    }
  });

  it('best-of keeps the best answer and never lets one provider abort the others', async () => {
    const fixed = (out: bigint): TradeEstimator => ({ name: 'fixed', estimate: async () => ({ outAmount: out, gas: 1n, solver: 'amm', verified: false }) });
    const noLiq: TradeEstimator = { name: 'none', estimate: async () => { throw new OrderBookError('NoLiquidity', 'x'); } };
    mode = 'ok';
    const best = await new BestOfEstimators([fixed(4000n), estimator()]).estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1000n });
    assert.equal(best.solver, 'external-orderbook');
    mode = 'error';
    const errors: unknown[] = [];
    const fallback = await new BestOfEstimators([fixed(4000n), estimator()], (e) => errors.push(e)).estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1000n });
    assert.equal(fallback.solver, 'amm');
    assert.equal(errors.length, 1);
    await assert.rejects(new BestOfEstimators([noLiq, estimator()]).estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1n }), (e: unknown) => e instanceof OrderBookError && e.errorType === 'NoLiquidity');
    await assert.rejects(new BestOfEstimators([estimator()]).estimate({ sellToken: A, buyToken: B, kind: 'sell', amount: 1n }), ProviderUnavailableError);
  });
});
