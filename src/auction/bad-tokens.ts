/**
 * A bad-token detector (issue 19): a token whose orders keep making settlements fail is left out of auctions for a
 * while, whatever orders carry it next. Every time orders are blamed for a failing settlement (`findFailingOrders`),
 * their sell and buy tokens are blamed once for that auction; a token blamed in `threshold` different auctions
 * within `windowBlocks` blocks is bad until `banBlocks` blocks later. Blocks are the clock: nothing here waits.
 * The state is the auction loop's own (in memory; a new leader starts afresh).
 *
 * @example
 *   const detector = new BadTokenDetector();
 *   detector.blame([weth, shady], auctionId, head);
 *   const bad = detector.bad(head); // Set of lowercase token addresses
 */
import type { Address } from 'viem';

export interface BadTokenOptions {
  /** distinct auctions a token is blamed in before it is bad (default 3) */
  threshold?: number;
  /** blocks within which those blames count (default 50) */
  windowBlocks?: number;
  /** blocks a bad token stays out (default 200) */
  banBlocks?: number;
}

export class BadTokenDetector {
  private readonly blames = new Map<Address, Array<{ auctionId: number; block: number }>>();
  private readonly banned = new Map<Address, number>();
  private readonly threshold: number;
  private readonly windowBlocks: number;
  private readonly banBlocks: number;

  constructor(options: BadTokenOptions = {}) {
    this.threshold = options.threshold ?? 3;
    this.windowBlocks = options.windowBlocks ?? 50;
    this.banBlocks = options.banBlocks ?? 200;
  }

  /** Blames the tokens of orders that made an auction's settlement fail; returns the tokens that became bad. */
  blame(tokens: Iterable<Address>, auctionId: number, block: number): Address[] {
    const newlyBad: Address[] = [];
    for (const raw of new Set([...tokens].map((t) => t.toLowerCase() as Address))) {
      const recent = (this.blames.get(raw) ?? []).filter((b) => b.block > block - this.windowBlocks && b.auctionId !== auctionId);
      recent.push({ auctionId, block });
      this.blames.set(raw, recent);
      if (recent.length >= this.threshold && !this.isBad(raw, block)) {
        this.banned.set(raw, block + this.banBlocks);
        this.blames.delete(raw);
        newlyBad.push(raw);
      }
    }
    return newlyBad;
  }

  isBad(token: Address, block: number): boolean {
    const until = this.banned.get(token.toLowerCase() as Address);
    return until !== undefined && block < until;
  }

  /** The tokens bad at `block` (lowercase). */
  bad(block: number): Set<Address> {
    for (const [token, until] of this.banned) if (block >= until) this.banned.delete(token);
    return new Set(this.banned.keys());
  }
}
