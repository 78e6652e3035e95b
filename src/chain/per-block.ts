/**
 * A read remembered for one block: the first call after the block feed's head changes reads, every other call
 * until the next head shares that read. A failed read is not kept. Without a current head (the feed is not
 * running, or its last poll failed) every call reads.
 *
 * @example
 *   const gasPrice = perBlock(reader.blockFeed, () => reader.gasPrice());
 */
import type { Hex } from 'viem';

export function perBlock<T>(feed: { readonly current: { hash: Hex } | null }, read: () => Promise<T>): () => Promise<T> {
  let head: Hex | null = null;
  let value: Promise<T> | null = null;
  return () => {
    const now = feed.current?.hash ?? null;
    if (now === null) return read();
    if (now !== head || value === null) {
      head = now;
      const p = read();
      value = p;
      p.catch(() => {
        if (value === p) value = null;
      });
    }
    return value;
  };
}
