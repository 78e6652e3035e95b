/**
 * The SQL twin of protocol/order-fill.ts for queries over `orders o`: an order is not fully executed while what its
 * trades executed, in its limit's unit (sell orders: sell amount before fees; buy orders: buy amount), is below
 * its limit. The caller says how it sums its trades (a lateral join, subqueries).
 *
 * @example
 *   .where(notFullyExecutedSql({ soldBeforeFees: sql`t.sell - t.fee`, bought: sql`t.buy` }))
 */
import { sql, type RawBuilder } from 'kysely';

export interface ExecutedSums {
  /** Σ (sell amount − fee) of the order's trades; null when it has none */
  soldBeforeFees: RawBuilder<unknown>;
  /** Σ buy amount of the order's trades; null when it has none */
  bought: RawBuilder<unknown>;
}

export function notFullyExecutedSql(sums: ExecutedSums): RawBuilder<boolean> {
  return sql<boolean>`(case when o.kind = 'sell' then coalesce(${sums.soldBeforeFees}, 0) < o.sell_amount else coalesce(${sums.bought}, 0) < o.buy_amount end)`;
}

/** One trade's executed amount in its order's limit unit, for a trade aliased `tradeAlias` of `orders o`. */
export function tradeExecutedAmountSql(tradeAlias: string): RawBuilder<unknown> {
  const t = sql.table(tradeAlias);
  return sql`(case when o.kind = 'sell' then ${t}.sell_amount - ${t}.fee_amount else ${t}.buy_amount end)`;
}
