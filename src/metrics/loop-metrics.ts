/**
 * Metrics of the background loops, recorded from the outside through the loops' own listeners (no counters
 * inside the loops): auction build time, solutions and settlements by outcome, the indexer's lag behind the head.
 *
 * @example
 *   recordAuctionCycles(auctionLoop, 'devnet', metrics);
 *   recordIndexerLag({ indexer, reader: network.reader, chain: 'devnet', metrics, signal });
 */
import type { Metrics } from './metrics.js';

/** What the metrics read of an auction cycle's report (auction/auction-loop.ts `CycleReport` has it). */
export interface CycleFigures {
  buildSeconds: number;
  ranked: ReadonlyArray<{ filteredOut: boolean; isWinner: boolean }>;
  winner: unknown;
  settlement: Promise<{ status: string }> | null;
}

interface CycleSource {
  onCycle(listener: (report: CycleFigures) => void): () => void;
}

/** Records every cycle of an auction loop; returns an unsubscribe. */
export function recordAuctionCycles(loop: CycleSource, chain: string, metrics: Metrics): () => void {
  return loop.onCycle((report) => {
    metrics.auctions.built(chain, report.buildSeconds);
    const valid = report.ranked.filter((r) => !r.filteredOut && !r.isWinner).length;
    metrics.auctions.solutions(chain, 'winner', report.winner ? 1 : 0);
    metrics.auctions.solutions(chain, 'ranked', valid);
    metrics.auctions.solutions(chain, 'rejected', report.ranked.filter((r) => r.filteredOut).length);
    void report.settlement?.then(
      (outcome) => metrics.auctions.settlement(chain, outcome.status),
      () => metrics.auctions.settlement(chain, 'failed'),
    );
  });
}

export interface IndexerLagSources {
  indexer: { onIndexed(listener: (fromBlock: number, toBlock: number) => void): () => void };
  reader: { onBlock(listener: (block: { number: bigint }) => void, signal?: AbortSignal): () => void };
  chain: string;
  metrics: Metrics;
  signal: AbortSignal;
}

/** Keeps `indexer_lag_blocks` = newest head seen − last indexed block; returns an unsubscribe. */
export function recordIndexerLag({ indexer, reader, chain, metrics, signal }: IndexerLagSources): () => void {
  let head = -1;
  let indexed = -1;
  const update = () => {
    if (head >= 0 && indexed >= 0) metrics.indexerLag.set(chain, head - indexed);
  };
  const offBlocks = reader.onBlock((block) => {
    head = Math.max(head, Number(block.number));
    update();
  }, signal);
  const offIndexed = indexer.onIndexed((_from, to) => {
    indexed = to;
    update();
  });
  return () => {
    offBlocks();
    offIndexed();
  };
}
