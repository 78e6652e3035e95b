/**
 * GET /api/v1/orders/{UID}/status: where an order is in the competition, from its latest order event (as
 * upstream maps them: created → scheduled, ready → active, considered → solved, executing → executing,
 * traded → traded, cancelled → cancelled, filtered/invalid → open). A fulfilled order is `traded`; a cancelled or
 * expired one `cancelled`. For solved / executing / traded, `value` lists every solver of the latest competition
 * that proposed the order, with `executedAmounts` where its solution traded it.
 */
import type { Kysely } from 'kysely';
import type { Hex } from 'viem';
import { toBytes } from '../db/codec.js';
import type { DB } from '../db/schema.js';
import type { OrderRepository } from '../orderbook/orders/order-repository.js';
import { orderStatus } from '../orderbook/orders/order-status.js';
import type { CompetitionStatusBody } from '../orderbook/routes/context.js';
import type { CompetitionStore } from './competition-store.js';

const BY_LABEL: Record<string, CompetitionStatusBody['type']> = {
  created: 'scheduled',
  ready: 'active',
  considered: 'solved',
  executing: 'executing',
  traded: 'traded',
  cancelled: 'cancelled',
  expired: 'cancelled',
  filtered: 'open',
  invalid: 'open',
};

export interface CompetitionStatusDeps {
  chainId: number;
  db: Kysely<DB>;
  orders: OrderRepository;
  competitions: CompetitionStore;
  /** unix seconds */
  now: () => number;
}

export function createCompetitionStatus(deps: CompetitionStatusDeps): (uid: Hex) => Promise<CompetitionStatusBody | null> {
  const { chainId, db, orders, competitions, now } = deps;

  async function value(uid: Hex): Promise<NonNullable<CompetitionStatusBody['value']>> {
    const competition = await competitions.latestForOrder(uid);
    if (!competition) return [];
    return competition.solutions.map((s) => {
      const hit = s.orders.find((o) => o.id === uid);
      return hit ? { solver: s.solver, executedAmounts: { sell: hit.sellAmount, buy: hit.buyAmount } } : { solver: s.solver };
    });
  }

  return async function competitionStatus(uid: Hex): Promise<CompetitionStatusBody | null> {
    const key = uid.toLowerCase() as Hex;
    const order = await orders.get(chainId, key);
    if (!order) return null;
    const status = orderStatus(order, now());
    if (status === 'fulfilled') return { type: 'traded', value: await value(key) };
    if (status === 'cancelled' || status === 'expired') return { type: 'cancelled' };
    const latest = await db
      .selectFrom('order_events')
      .select('label')
      .where('chain_id', '=', chainId)
      .where('order_uid', '=', toBytes(key))
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    const type = latest ? (BY_LABEL[latest.label] ?? 'open') : 'open';
    if (type === 'solved' || type === 'executing' || type === 'traded') return { type, value: await value(key) };
    return { type };
  };
}
