/**
 * The time a network's order book goes by. On the devnet it follows the chain: the head block's timestamp, or the
 * wall clock where that is later (`later-of`, so a test that moves the chain forward with the control API's
 * `time` sees orders expire at once), or the head's timestamp alone (`chain`, deterministic mode, whose chain
 * keeps a clock of its own). Heads come from the block feed; the control API reports the blocks it mines itself.
 *
 * @example
 *   const clock = await ChainClock.start(network.reader, 'later-of', signal);
 *   clock.now(); // unix seconds
 */
import type { ChainReader } from './reader.js';

export type ChainClockMode = 'chain' | 'later-of';

export class ChainClock {
  private head: number;

  private constructor(
    private readonly mode: ChainClockMode,
    head: number,
  ) {
    this.head = head;
  }

  /** Reads the head once (so the first answer is already the chain's), then follows every new head until `signal`. */
  static async start(reader: ChainReader, mode: ChainClockMode, signal: AbortSignal): Promise<ChainClock> {
    const latest = await reader.client.getBlock({ blockTag: 'latest' });
    const clock = new ChainClock(mode, Number(latest.timestamp));
    reader.onBlock((block) => clock.observe(Number(block.timestamp), true), signal);
    return clock;
  }

  /** unix seconds */
  readonly now = (): number => {
    const wall = Math.floor(Date.now() / 1000);
    return this.mode === 'chain' ? this.head : Math.max(wall, this.head);
  };

  /** A head the chain reached (`exact`: it is the head now, e.g. after a revert; otherwise only a later time counts). */
  observe(timestamp: number, exact = false): void {
    if (exact || timestamp > this.head) this.head = timestamp;
  }
}
