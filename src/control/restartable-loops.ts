/**
 * The node's background loops (indexer, auctions, notifications, hooks of each chain), stoppable and startable
 * again: the control API's revert stops them, puts the chain and the database back, and starts them afresh, so
 * nothing they hold in memory (checkpoints, the last auctioned block) outlives the revert.
 *
 * @example
 *   const loops = restartableLoops((signal) => startBackgroundLoops({ ...deps, signal }), app.signal);
 *   await loops.pause(); ...; loops.resume();
 */
import { setMaxListeners } from 'node:events';
import type { RunningLoops } from '../loops.js';

export interface RestartableLoops {
  /** the loops running now (their maps change with each restart) */
  readonly current: RunningLoops;
  /** stops every loop and waits for them */
  pause(): Promise<void>;
  /** starts them again (after pause) */
  resume(): void;
  stop(): Promise<void>;
}

export function restartableLoops(start: (signal: AbortSignal) => RunningLoops, parent: AbortSignal): RestartableLoops {
  let generation = new AbortController();
  const begin = (): RunningLoops => {
    setMaxListeners(100, generation.signal);
    return start(generation.signal);
  };
  let current = begin();
  let paused = false;
  parent.addEventListener('abort', () => generation.abort(), { once: true });
  return {
    get current() {
      return current;
    },
    async pause() {
      if (paused) return;
      paused = true;
      generation.abort();
      await current.stop();
    },
    resume() {
      if (!paused || parent.aborted) return;
      paused = false;
      generation = new AbortController();
      current = begin();
    },
    async stop() {
      generation.abort();
      await current.stop();
    },
  };
}
