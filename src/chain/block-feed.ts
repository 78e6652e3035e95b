/**
 * One block subscription per chain, fanned out to any number of listeners. Over WebSocket it uses
 * `eth_subscribe('newHeads')` (viem watchBlocks); over HTTP it polls the latest block and emits whenever the
 * head's hash changes (so a same-height reorg is reported too). The subscription starts with the first listener
 * and stops with the last; the current head is delivered when it starts. A listener that throws does not disturb the others.
 *
 * @example
 *   const feed = new BlockFeed(client, { pollingIntervalMs: 1000 });
 *   const stop = feed.subscribe((block) => console.log(block.number), signal);
 */
import type { Hex } from 'viem';
import type { ChainClient } from './client.js';

export interface BlockHead {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  /** seconds */
  timestamp: bigint;
}

export type BlockListener = (block: BlockHead) => void | Promise<void>;

export interface BlockFeedLogger {
  warn(obj: object, msg?: string): void;
}

export interface BlockFeedOptions {
  /** HTTP polling interval (default 1000 ms) */
  pollingIntervalMs?: number;
  logger?: BlockFeedLogger;
}

export class BlockFeed {
  private readonly listeners = new Set<BlockListener>();
  private stopSource: (() => void) | null = null;
  private last: BlockHead | null = null;
  /** false from a failed poll (or subscription error) until the next head arrives */
  private healthy = false;
  private readonly pollingIntervalMs: number;

  constructor(
    private readonly client: ChainClient,
    private readonly options: BlockFeedOptions = {},
  ) {
    this.pollingIntervalMs = options.pollingIntervalMs ?? 1_000;
  }

  /** The newest block seen by the running subscription (null before the first one). */
  get latest(): BlockHead | null {
    return this.last;
  }

  /**
   * The newest head while the chain answers: null after a failed poll or subscription error until the next head.
   * Reads remembered per block (`perBlock`, pool reserves) key on it, so a node that stops answering is not
   * served from the last block's memory for longer than one poll.
   */
  get current(): BlockHead | null {
    return this.healthy ? this.last : null;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Adds a listener; returns a function that removes it (aborting `signal` does the same). */
  subscribe(listener: BlockListener, signal?: AbortSignal): () => void {
    if (signal?.aborted) return () => {};
    // the same function may subscribe twice; wrap it so each subscription is distinct
    const entry: BlockListener = (block) => listener(block);
    this.listeners.add(entry);
    const unsubscribe = (): void => {
      signal?.removeEventListener('abort', unsubscribe);
      if (!this.listeners.delete(entry)) return;
      if (this.listeners.size === 0) this.stop();
    };
    signal?.addEventListener('abort', unsubscribe, { once: true });
    if (!this.stopSource) this.start();
    return unsubscribe;
  }

  private emit(block: BlockHead): void {
    this.healthy = true;
    if (this.last && this.last.hash === block.hash) return;
    this.last = block;
    for (const listener of [...this.listeners]) {
      try {
        const result = listener(block);
        if (result && typeof (result as Promise<void>).catch === 'function') {
          (result as Promise<void>).catch((err) => this.options.logger?.warn({ err }, 'block listener failed'));
        }
      } catch (err) {
        this.options.logger?.warn({ err }, 'block listener failed');
      }
    }
  }

  private start(): void {
    this.last = null; // the first head after (re)starting is delivered, like emit-on-begin
    if (this.client.transport.type === 'webSocket') {
      const unwatch = this.client.watchBlocks({
        emitOnBegin: true,
        includeTransactions: false,
        onBlock: (block) => {
          if (block.number === null || block.hash === null) return;
          this.emit({ number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp });
        },
        onError: (err) => {
          this.healthy = false;
          this.options.logger?.warn({ err }, 'block subscription error');
        },
      });
      this.stopSource = unwatch;
      return;
    }
    const controller = new AbortController();
    this.stopSource = () => controller.abort();
    void this.poll(controller.signal);
  }

  private stop(): void {
    this.healthy = false;
    const stop = this.stopSource;
    this.stopSource = null;
    stop?.();
  }

  private async poll(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const block = await this.client.getBlock({ blockTag: 'latest', includeTransactions: false });
        if (!signal.aborted && block.number !== null && block.hash !== null) {
          this.emit({ number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp });
        }
      } catch (err) {
        this.healthy = false;
        if (!signal.aborted) this.options.logger?.warn({ err }, 'block poll failed');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.pollingIntervalMs);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
