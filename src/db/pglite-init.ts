/**
 * Creating a PGlite data directory (initdb) takes seconds of CPU inside WebAssembly. Done on the main thread it
 * blocks the event loop, so everything started beside it (the devnet's deployment and history replay) waits.
 * `initPgliteDataDir` runs it in a worker thread instead; the main thread then opens the initialised directory,
 * which is fast.
 *
 * @example
 *   await initPgliteDataDir('./.batchbook/pglite'); // no-op when already initialised
 *   const pglite = new PGlite({ dataDir: './.batchbook/pglite' });
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

// plain JavaScript (an eval'd worker needs no TypeScript loader); workerData: { module, dataDir }
const INIT_WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.module)
  .then(async ({ PGlite }) => {
    const pglite = new PGlite({ dataDir: workerData.dataDir });
    await pglite.waitReady;
    await pglite.close();
    parentPort.postMessage({ ok: true });
  })
  .catch((err) => parentPort.postMessage({ ok: false, error: String((err && err.stack) || err) }));
`;

/** true when the directory holds an initialised cluster */
export function isPgliteDataDir(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'));
}

export async function initPgliteDataDir(dataDir: string): Promise<void> {
  if (isPgliteDataDir(dataDir)) return;
  mkdirSync(dataDir, { recursive: true });
  const worker = new Worker(INIT_WORKER, { eval: true, workerData: { module: import.meta.resolve('@electric-sql/pglite'), dataDir } });
  try {
    const result = await new Promise<{ ok: boolean; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`PGlite initialisation worker exited with code ${code}`)));
    });
    if (!result.ok) throw new Error(`PGlite could not initialise ${dataDir}: ${result.error}`);
  } finally {
    await worker.terminate();
  }
}
