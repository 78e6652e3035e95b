/**
 * Turns indexed eth-flow placements into orders, as production does: the order the contract owns (owner = the
 * contract, sell token WETH, validTo 2^32 − 1, EIP-1271, class limit when the signed fee is 0), created at the
 * placement's block time, with the user's deadline as its true validTo. It is priced like an API order: the quote
 * named in the event's data when it matches, else a stored matching one, else a fresh one; only when no price can
 * be had is there a placement error (an unsupported token → `preValidationError`, anything else → `other`), and a
 * non-zero signed fee is `nonZeroFee`. An order with a placement error is shown, never auctioned.
 *
 * Runs after each indexed range (and on a timer); a placement is taken once (its row gets `ingested_at` in the
 * transaction that inserts the order, so a reorg that deleted the row meanwhile inserts nothing).
 *
 * @example
 *   const ingest = new EthFlowIngest({ chainId, db, orders, quoter, settlement, logger });
 *   indexer.onIndexed(() => ingest.wake());
 *   await ingest.run(signal);
 */
import { sql, type Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { fromNumeric, toBytes, toHex, toHexOrNull } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { OrderBookError } from '../../protocol/order-book-error.js';
import type { StoredQuote } from '../quotes/stored-quote.js';
import type { OrderQuoter } from './order-ports.js';
import type { OrderRepository } from './order-repository.js';

/** What production assigns today (wire values, camelCase). */
export type EthFlowPlacementError = 'preValidationError' | 'nonZeroFee' | 'other';

export interface EthFlowIngestLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface EthFlowIngestOptions {
  chainId: number;
  db: Kysely<DB>;
  orders: OrderRepository;
  quoter: OrderQuoter;
  settlement: Address;
  logger: EthFlowIngestLogger;
  /** placements taken per pass (default 50) */
  batch?: number;
  /** the longest wait between passes without a wake-up (default 2000 ms) */
  pollIntervalMs?: number;
}

type Pending = Awaited<ReturnType<EthFlowIngest['pending']>>[number];

/** a placement whose pricing failed this often for reasons not its own gets placement error `other` */
const MAX_ATTEMPTS = 5;

export class EthFlowIngest {
  private readonly failures = new Map<string, number>();
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(private readonly options: EthFlowIngestOptions) {}

  /** Asks for a pass now (after the indexer committed a range). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let more = false;
      try {
        more = await this.ingestPending();
      } catch (err) {
        if (signal.aborted) return;
        this.options.logger.warn({ chainId: this.options.chainId, err }, 'eth-flow: ingesting placements failed; retrying');
      }
      if (more || signal.aborted) continue;
      if (!this.woken) await this.idle(signal);
      this.woken = false;
    }
  }

  /** One pass over the placements not yet taken; true when a full batch was taken (there may be more). */
  async ingestPending(): Promise<boolean> {
    const batch = this.options.batch ?? 50;
    const rows = await this.pending(batch);
    let failed = 0;
    for (const row of rows) {
      const key = `${row.block_number}:${row.log_index}`;
      try {
        await this.ingest(row, (this.failures.get(key) ?? 0) >= MAX_ATTEMPTS);
        this.failures.delete(key);
      } catch (err) {
        // one placement that cannot be priced now (a node or provider failing) holds no other back
        failed++;
        this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
        this.options.logger.warn({ chainId: this.options.chainId, uid: toHex(row.order_uid), attempts: this.failures.get(key), err }, 'eth-flow: pricing a placement failed; retrying');
      }
    }
    if (this.failures.size > 10_000) this.failures.clear();
    return rows.length === batch && failed < rows.length;
  }

  private pending(limit: number) {
    return this.options.db
      .selectFrom('ethflow_placements')
      .selectAll()
      .where('chain_id', '=', this.options.chainId)
      .where('ingested_at', 'is', null)
      .orderBy('block_number')
      .orderBy('log_index')
      .limit(limit)
      .execute();
  }

  private async ingest(row: Pending, giveUp: boolean): Promise<void> {
    const { chainId, orders } = this.options;
    const uid = toHex(row.order_uid);
    const feeAmount = fromNumeric(row.fee_amount);
    const sellAmount = fromNumeric(row.sell_amount);
    const buyAmount = fromNumeric(row.buy_amount);
    const quoteId = BigInt(row.quote_id);
    let quote: StoredQuote | null = null;
    let placementError: EthFlowPlacementError | null = null;
    try {
      quote = await this.options.quoter.quoteForOrder({
        quoteId: quoteId > 0n && quoteId <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(quoteId) : null,
        sellToken: toHex(row.sell_token) as Address,
        buyToken: toHex(row.buy_token) as Address,
        kind: row.kind as 'sell' | 'buy',
        sellAmount,
        buyAmount,
        feeAmount,
        from: toHex(row.owner) as Address,
        signingScheme: row.signing_scheme,
        appData: toHex(row.app_data),
        validTo: Number(row.valid_to),
      });
    } catch (err) {
      // not the order's fault (database, node): retried on the next passes, then given up as `other`
      if (!(err instanceof OrderBookError) && !giveUp) throw err;
      placementError = err instanceof OrderBookError && err.errorType === 'UnsupportedToken' ? 'preValidationError' : 'other';
    }
    if (feeAmount !== 0n) placementError = 'nonZeroFee';

    await orders.transaction(async (tx) => {
      const taken = await tx
        .updateTable('ethflow_placements')
        .set({ ingested_at: sql`now()` as never, placement_error: placementError })
        .where('chain_id', '=', chainId)
        .where('block_number', '=', row.block_number)
        .where('log_index', '=', row.log_index)
        .where('ingested_at', 'is', null)
        .returning('order_uid')
        .executeTakeFirst();
      if (!taken) return; // reorged away, or taken by another pass
      await orders.insert(
        {
          chainId,
          uid,
          owner: toHex(row.owner) as Address,
          sellToken: toHex(row.sell_token) as Address,
          buyToken: toHex(row.buy_token) as Address,
          receiver: toHexOrNull(row.receiver) as Address | null,
          sellAmount,
          buyAmount,
          validTo: Number(row.valid_to),
          appData: toHex(row.app_data),
          feeAmount,
          kind: row.kind as 'sell' | 'buy',
          partiallyFillable: row.partially_fillable,
          signature: toHex(row.signature) as Hex,
          signingScheme: row.signing_scheme,
          sellTokenBalance: row.sell_token_balance,
          buyTokenBalance: row.buy_token_balance,
          // as production: a zero signed fee makes a limit order
          class: feeAmount === 0n ? 'limit' : 'market',
          settlementContract: this.options.settlement,
          outsideMarket: quote !== null && isOutsideMarket(sellAmount, buyAmount, quote),
          validFrom: null,
          trueValidTo: Number(row.user_valid_to),
          createdAt: new Date(row.block_time),
        },
        placementError === null ? quote : null,
        tx,
      );
      // the same order posted through the API first (the contract signs it too): it still ends at the user's deadline
      await tx.updateTable('orders').set({ true_valid_to: Number(row.user_valid_to) }).where('chain_id', '=', chainId).where('uid', '=', row.order_uid).where('true_valid_to', 'is', null).execute();
    });
    this.options.logger.info({ chainId, uid, placementError }, 'eth-flow: order placed on chain');
  }

  private idle(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs ?? 2_000);
      signal.addEventListener('abort', done, { once: true });
      this.wakeUp = done;
    });
  }
}

/** The limit asks for more than the quote offers for its sell amount (accepted; a metric upstream, a flag here). */
function isOutsideMarket(sellAmount: bigint, buyAmount: bigint, quote: StoredQuote): boolean {
  if (quote.sellAmount === 0n) return true;
  return buyAmount * quote.sellAmount > quote.buyAmount * sellAmount;
}
