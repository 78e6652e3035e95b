import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpRequestError, InternalRpcError, LimitExceededRpcError, RpcRequestError, ResponseBodyTooLargeError, TimeoutError, MethodNotFoundRpcError } from 'viem';
import type { Transport } from 'viem';
import { backoffDelay, isLogRangeTooLarge, isTransientRpcError, withJitteredRetry } from './rpc-retry.js';

describe('backoffDelay', () => {
  it('grows exponentially up to the cap, never above the ceiling', () => {
    const top = () => 0.999999;
    assert.equal(backoffDelay(0, { baseDelayMs: 100, maxDelayMs: 5000, random: top }), 99);
    assert.equal(backoffDelay(3, { baseDelayMs: 100, maxDelayMs: 5000, random: top }), 799);
    assert.equal(backoffDelay(20, { baseDelayMs: 100, maxDelayMs: 5000, random: top }), 4999);
    assert.equal(backoffDelay(5, { baseDelayMs: 100, maxDelayMs: 5000, random: () => 0 }), 0);
  });

  it('is jittered: the same attempt gives spread-out delays', () => {
    const samples = Array.from({ length: 200 }, () => backoffDelay(4, { baseDelayMs: 100, maxDelayMs: 10_000 }));
    assert.ok(samples.every((s) => s >= 0 && s < 1600));
    assert.ok(new Set(samples).size > 50, `only ${new Set(samples).size} distinct delays`);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    assert.ok(mean > 500 && mean < 1100, `mean ${mean}`);
  });
});

describe('isTransientRpcError', () => {
  const url = 'http://node';
  it('retries network failures, timeouts, 429/5xx and rate or internal JSON-RPC errors', () => {
    assert.equal(isTransientRpcError(new HttpRequestError({ url, status: 503 })), true);
    assert.equal(isTransientRpcError(new HttpRequestError({ url, status: 429 })), true);
    assert.equal(isTransientRpcError(new HttpRequestError({ url, cause: new Error('ECONNREFUSED') })), true);
    assert.equal(isTransientRpcError(new TimeoutError({ body: {}, url })), true);
    const rpc = (code: number, message: string) => new RpcRequestError({ body: {}, url, error: { code, message } });
    assert.equal(isTransientRpcError(new LimitExceededRpcError(rpc(-32005, 'rate limited'))), true);
    assert.equal(isTransientRpcError(new InternalRpcError(rpc(-32603, 'internal'))), true);
    assert.equal(isTransientRpcError(rpc(-32000, 'header not found')), true);
  });

  it('does not retry reverts, bad requests or unknown methods', () => {
    const rpc = (code: number, message: string) => new RpcRequestError({ body: {}, url, error: { code, message } });
    assert.equal(isTransientRpcError(new HttpRequestError({ url, status: 400 })), false);
    assert.equal(isTransientRpcError(rpc(3, 'execution reverted')), false);
    assert.equal(isTransientRpcError(rpc(-32000, 'execution reverted')), false);
    assert.equal(isTransientRpcError(new MethodNotFoundRpcError(rpc(-32601, 'nope'))), false);
    const abort = new Error('aborted');
    abort.name = 'AbortError';
    assert.equal(isTransientRpcError(abort), false);
  });

  it('recognises eth_getLogs refusals that ask for a smaller range', () => {
    const rpc = (message: string) => new RpcRequestError({ body: {}, url, error: { code: -32005, message } });
    assert.equal(isLogRangeTooLarge(rpc('query returned more than 10000 results')), true);
    assert.equal(isLogRangeTooLarge(rpc('eth_getLogs is limited to a 10,000 block range')), true);
    assert.equal(isLogRangeTooLarge(rpc('Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range')), true);
    assert.equal(isLogRangeTooLarge(rpc('execution reverted')), false);
    const tooBig = new ResponseBodyTooLargeError({ maxSize: 10, size: 20 });
    assert.equal(isLogRangeTooLarge(tooBig), true, 'a response over the transport limit');
    assert.equal(isTransientRpcError(tooBig), false, 'retrying the same range would not help');
  });
});

describe('withJitteredRetry with a budget', () => {
  // a node that answers every request with a timeout after 40 ms (a stalled node behind a short timeout)
  const stalled = (attempts: { n: number }) =>
    (() => ({
      config: { key: 'stalled', name: 'stalled', type: 'custom', retryCount: 0, request: async () => undefined },
      request: async () => {
        attempts.n++;
        await new Promise((r) => setTimeout(r, 40));
        throw new TimeoutError({ body: {}, url: 'http://stalled' });
      },
      value: undefined,
    })) as unknown as Transport;

  it('stops retrying once the budget is spent, where without one it makes every attempt', async () => {
    const bounded = { n: 0 };
    const unbounded = { n: 0 };
    const policy = { retryCount: 10, baseDelayMs: 1, maxDelayMs: 1 };
    await assert.rejects(withJitteredRetry(stalled(bounded), { ...policy, budgetMs: 40 })({} as never).request({ method: 'eth_blockNumber' }), TimeoutError);
    await assert.rejects(withJitteredRetry(stalled(unbounded), policy)({} as never).request({ method: 'eth_blockNumber' }), TimeoutError);
    assert.equal(bounded.n, 1, 'the first timeout spent the budget');
    assert.equal(unbounded.n, 11);
  });
});
