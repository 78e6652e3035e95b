/**
 * What a test does to the devnet node through the control API: snapshot and revert the chain, the database and
 * the node's memory together; mine blocks; move time forward; hold auctions back and run one on demand. One
 * operation at a time (a revert never overlaps a snapshot or an auction run).
 *
 * Snapshots are reusable: reverting to one takes it again at once (anvil consumes a snapshot it reverts to), so
 * `revert {id}` can be sent before every test; snapshots taken after it are dropped, as anvil drops them.
 */
import type { Hex } from 'viem';
import type { Kysely } from 'kysely';
import type { AuctionGate } from '../auction/auction-loop.js';
import type { ChainClock } from '../chain/chain-clock.js';
import type { DevnetRpc } from '../chain/devnet/rpc.js';
import type { OrderService } from '../orderbook/orders/order-service.js';
import { DatabaseSnapshots } from './database-snapshots.js';
import type { RestartableLoops } from './restartable-loops.js';

/** A request the control API refuses: its order-book `errorType` and HTTP status. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    readonly description: string,
  ) {
    super(`${errorType}: ${description}`);
    this.name = 'ControlError';
  }
}

export interface DevnetControlDeps {
  /** the devnet's name (its loops' key) */
  network: string;
  rpc: DevnetRpc;
  db: Kysely<any>;
  loops: RestartableLoops;
  gate: AuctionGate;
  clock: ChainClock | null;
  orders: OrderService;
  /** forgets what the node remembers for a while (native prices); what it remembers per block needs nothing */
  clearCaches: () => void;
}

export interface AuctionRun {
  auctionId: number;
  winner: string | null;
  txHash: Hex | null;
}

interface RpcBlock {
  number: Hex;
  timestamp: Hex;
}

/** the most blocks one `mine` may ask for (the node mines them at once) */
export const MAX_MINE_BLOCKS = 1_000;
/** snapshots kept at once (each holds a copy of the database) */
export const MAX_SNAPSHOTS = 100;
/** the furthest one `time` may move the chain: ten years */
export const MAX_TIME_INCREASE = 10 * 365 * 24 * 3600;

export class DevnetControl {
  private readonly snapshots = new Map<string, Hex>();
  private readonly database: DatabaseSnapshots;
  private next = 1;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: DevnetControlDeps) {
    this.database = new DatabaseSnapshots(deps.db);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private async head(): Promise<{ number: number; timestamp: number }> {
    const block = await this.deps.rpc.request<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
    return { number: Number(BigInt(block.number)), timestamp: Number(BigInt(block.timestamp)) };
  }

  /** Takes a snapshot of the chain and the database (the loops hold still meanwhile, so both show the same moment). */
  snapshot(): Promise<{ id: string }> {
    return this.exclusive(async () => {
      if (this.snapshots.size >= MAX_SNAPSHOTS) throw new ControlError(409, 'TooManySnapshots', `${MAX_SNAPSHOTS} snapshots are kept at most; revert to an earlier one (that drops the later ones)`);
      await this.deps.loops.pause();
      try {
        const anvilId = await this.deps.rpc.request<Hex>('evm_snapshot');
        const id = String(this.next++);
        await this.database.take(id);
        this.snapshots.set(id, anvilId);
        return { id };
      } finally {
        this.deps.loops.resume();
      }
    });
  }

  /** Puts the chain, the database and the node's memory back to the snapshot; answers once the node runs on it again. */
  revert(id: string): Promise<void> {
    return this.exclusive(async () => {
      const anvilId = this.snapshots.get(id);
      if (anvilId === undefined) throw new ControlError(404, 'SnapshotNotFound', `no snapshot ${id} (ids come from POST /devnet/control/snapshot; a revert drops the snapshots taken after it)`);
      await this.deps.loops.pause();
      try {
        const reverted = await this.deps.rpc.request<boolean>('evm_revert', [anvilId]);
        if (!reverted) throw new Error(`anvil did not revert to its snapshot ${anvilId}`);
        // anvil consumed it (and every later one): take it again so that the same id can be reverted to again
        this.snapshots.set(id, await this.deps.rpc.request<Hex>('evm_snapshot'));
        for (const later of [...this.snapshots.keys()].filter((k) => Number(k) > Number(id))) {
          this.snapshots.delete(later);
          await this.database.drop(later);
        }
        await this.database.restore(id);
        this.deps.clearCaches();
        this.deps.clock?.observe((await this.head()).timestamp, true);
      } finally {
        this.deps.loops.resume();
      }
    });
  }

  /** Mines `blocks` blocks; answers once they are mined. */
  mine(blocks: number): Promise<{ blockNumber: number }> {
    return this.exclusive(async () => {
      await this.deps.rpc.request('anvil_mine', [`0x${blocks.toString(16)}`]);
      const head = await this.head();
      this.deps.clock?.observe(head.timestamp);
      return { blockNumber: head.number };
    });
  }

  /** Mines a block at least `seconds` after the head; the order book's clock follows at once. */
  time(seconds: number): Promise<{ blockNumber: number; timestamp: number }> {
    return this.exclusive(async () => {
      const before = await this.head();
      await this.deps.rpc.request('evm_setNextBlockTimestamp', [`0x${(before.timestamp + seconds).toString(16)}`]);
      await this.deps.rpc.request('evm_mine');
      const head = await this.head();
      this.deps.clock?.observe(head.timestamp);
      return { blockNumber: head.number, timestamp: head.timestamp };
    });
  }

  /** Holds every auction back (`true`) or lets blocks and orders start them again (`false`). */
  setAuctionsPaused(paused: boolean): { paused: boolean } {
    this.deps.gate.paused = paused;
    return { paused };
  }

  get auctionsPaused(): boolean {
    return this.deps.gate.paused;
  }

  /**
   * Runs one auction now on the head (also while auctions are held back), waits for its settlement to be mined
   * and indexed, and for its orders to read `fulfilled`.
   */
  runAuction(): Promise<AuctionRun> {
    return this.exclusive(async () => {
      const { loops, network } = this.deps;
      const loop = loops.current.auctionLoops.get(network);
      if (!loop) throw new ControlError(409, 'AuctionsDisabled', 'this node runs no auctions (AUCTIONS=false)');
      const report = await loop.runOnce();
      if (!report) throw new ControlError(500, 'AuctionFailed', 'the auction failed; the node log says why');
      const winner = report.winner?.solution.solver ?? null;
      if (!report.settlement) return { auctionId: report.auction.id, winner: null, txHash: null };
      const outcome = await report.settlement;
      if (outcome.status !== 'mined') {
        return { auctionId: report.auction.id, winner: null, txHash: 'txHash' in outcome && outcome.status === 'reverted' ? outcome.txHash : null };
      }
      this.deps.clock?.observe((await this.head()).timestamp);
      // indexed, and its orders fulfilled, before the answer
      await loops.current.indexers.get(network)?.indexTo(outcome.blockNumber);
      // each traded order shows its fill (a fill-or-kill order reads `fulfilled`)
      const uids = report.winner!.solution.trades.map((t) => t.order.uid);
      const deadline = Date.now() + 60_000;
      const filled = async (uid: Hex): Promise<boolean> => {
        const order = await this.deps.orders.get(uid);
        return order !== null && (order.executedSellAmount !== '0' || order.executedBuyAmount !== '0');
      };
      for (const uid of uids) {
        while (!(await filled(uid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      }
      return { auctionId: report.auction.id, winner, txHash: outcome.txHash };
    });
  }
}
