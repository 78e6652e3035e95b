/**
 * The worker side of `engine-threads.ts`: takes one task at a time, runs it through `solveBody` with the named
 * built-in engine, and answers the auction's deadline as soon as it is decoded, then the `{solutions}` JSON text
 * (or the codec's refusal). Only ever loaded as a worker thread's entry.
 */
import { parentPort } from 'node:worker_threads';
import { CodecError } from './codec.js';
import { builtInEngine, solveBody } from './engines.js';
import type { ThreadMessage, ThreadTask } from './engine-threads.js';

const port = parentPort;
if (port) {
  const send = (m: ThreadMessage) => port.postMessage(m);
  port.on('message', (task: ThreadTask) => {
    // the built-ins read their pools from the auction: no chain client in a worker
    const engine = builtInEngine(task.engine, { ...task.network, client: undefined as never });
    solveBody(engine, task.body, { limits: task.limits, onDeadline: (deadline) => send({ deadline }) }).then(
      (result) => send({ result }),
      (err: unknown) => send(err instanceof CodecError ? { codecError: err.message } : { error: err instanceof Error ? err.message : String(err) }),
    );
  });
  send({ ready: true }); // loaded: the engine side may count on this thread now
}
