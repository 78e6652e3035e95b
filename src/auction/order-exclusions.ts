/**
 * Orders left out of auctions for a while (table `order_exclusions`): an order that makes a settlement's
 * simulation revert is excluded until a block, so the rest of its batch settles without it; once that block
 * passes it competes again (its owner may have restored the balance or allowance meanwhile).
 *
 * @example
 *   await exclusions.exclude([{ uid, reason: 'simulation_failed: ...' }], head + 20);
 *   const held = await exclusions.active(head);   // UIDs no auction offers now
 */
import { sql, type Kysely } from 'kysely';
import type { Hex } from 'viem';
import { toBytes, toHex } from '../db/codec.js';
import type { DB } from '../db/schema.js';

export class OrderExclusions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chainId: number,
  ) {}

  /** Excludes the orders until `untilBlock` (inclusive); an order already excluded gets the new block and reason. */
  async exclude(orders: Array<{ uid: Hex; reason: string }>, untilBlock: number): Promise<void> {
    if (orders.length === 0) return;
    await this.db
      .insertInto('order_exclusions')
      .values(orders.map((o) => ({ chain_id: this.chainId, order_uid: toBytes(o.uid), until_block: untilBlock, reason: o.reason })))
      .onConflict((oc) => oc.columns(['chain_id', 'order_uid']).doUpdateSet({ until_block: sql`excluded.until_block`, reason: sql`excluded.reason`, created_at: sql`now()` } as never))
      .execute();
  }

  /** UIDs excluded at `headBlock`. */
  async active(headBlock: number): Promise<Set<Hex>> {
    const rows = await this.db.selectFrom('order_exclusions').select('order_uid').where('chain_id', '=', this.chainId).where('until_block', '>=', headBlock).execute();
    return new Set(rows.map((r) => toHex(r.order_uid)));
  }
}
