/**
 * The fuzz's client in a worker thread (used by run.ts): generation, requests and checks do not compete with
 * the server for the main thread's event loop, so the figures measure the server.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runFuzz, type FuzzOptions } from './openapi-fuzz.js';

const options = workerData as Omit<FuzzOptions, 'onProgress'>;
const report = await runFuzz({
  ...options,
  onProgress: (done) => parentPort!.postMessage({ progress: done }),
  onFinding: (finding) => parentPort!.postMessage({ finding }),
});
parentPort!.postMessage({ report });
