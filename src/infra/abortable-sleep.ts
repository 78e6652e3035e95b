/**
 * Waits `ms`, or less when `signal` aborts first; always resolves (a loop checks its signal after the wait).
 *
 * @example
 *   while (!signal.aborted) { await work(); await sleep(1000, signal); }
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
