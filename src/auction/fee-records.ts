/**
 * What the driver charged each order of a submitted solution (issue 23): its fee policies in the auction, the
 * solution's uniform prices of its two tokens and the engine's network fee, kept per (auction, order) before the
 * settlement is sent. The order book reads a trade's protocol fees back from its executed amounts under these
 * policies, and its `executedFee` through these prices (reference fees.md §9).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { toBytes, toNumeric } from '../db/codec.js';
import { feePolicyJson } from '../protocol/index.js';
import type { ProposedTrade } from '../solver/solution.js';

export class FeeRecords {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  /** Records the charges of the solution's trades (those the driver charged); a repeat of the same auction is ignored. */
  async record(auctionId: number, trades: readonly ProposedTrade[]): Promise<void> {
    const rows = trades.flatMap(({ order, charges }) =>
      charges
        ? [
            {
              chain_id: this.chainId,
              auction_id: auctionId,
              order_uid: toBytes(order.uid),
              policies: JSON.stringify(charges.policies.map(feePolicyJson)),
              recipients: charges.policies.map((p) => p.recipient ?? ''),
              sell_price: toNumeric(charges.prices.sell),
              buy_price: toNumeric(charges.prices.buy),
              network_fee: toNumeric(charges.networkFee),
            },
          ]
        : [],
    );
    if (rows.length === 0) return;
    await this.db.insertInto('order_fee_records').values(rows).onConflict((c) => c.columns(['chain_id', 'auction_id', 'order_uid']).doNothing()).execute();
  }
}
