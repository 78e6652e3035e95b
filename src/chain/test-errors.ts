/**
 * For tests: an `assert.rejects` matcher for a failed JSON-RPC HTTP request with the given status, found anywhere
 * in the error's cause chain (viem wraps it, e.g. CallExecutionError ← HttpRequestError), so that a test expecting
 * "the node answered 503" does not pass on any other failure.
 *   await assert.rejects(reader.blockNumber(), httpStatus(503));
 */
import { HttpRequestError } from 'viem';

export function httpStatus(status: number): (err: unknown) => boolean {
  return (err) => {
    for (let e: unknown = err; e instanceof Error; e = e.cause) {
      if (e instanceof HttpRequestError) return e.status === status;
    }
    return false;
  };
}
