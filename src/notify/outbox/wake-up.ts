/**
 * The sleep of a polling loop that can be cut short: `wake()` (new work may be there) ends the current sleep, and
 * a wake that comes while the loop is busy is remembered so the loop looks again before sleeping.
 *
 * @example
 *   const wakeUp = new WakeUp();
 *   while (!signal.aborted) {
 *     wakeUp.clear();
 *     const found = await work();
 *     if (found === 0 && !wakeUp.pending) await wakeUp.sleep(pollIntervalMs, signal);
 *   }
 */
export class WakeUp {
  private resolveSleep: (() => void) | null = null;
  private woken = false;

  /** a wake came since the last clear() */
  get pending(): boolean {
    return this.woken;
  }

  clear(): void {
    this.woken = false;
  }

  wake(): void {
    this.woken = true;
    this.resolveSleep?.();
  }

  /** Resolves after `ms`, on wake(), or when the signal aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.resolveSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.resolveSleep = done;
    });
  }
}
