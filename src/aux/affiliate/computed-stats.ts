/**
 * Affiliate and trader statistics computed from our own data (no external analytics): bindings, each trade's
 * USD volume fixed at trade time (`affiliate_trade_volumes`), and recorded payouts. One SQL statement per
 * question aggregates the trades per trader (window of the time cap included); the reward arithmetic is
 * `reward-math.ts`. "Now" for the time cap and the 30-day activity is the time of the newest indexed block
 * included (`lastUpdatedAt`), so statistics follow chain time, also when a devnet's clock is moved.
 */
import { sql, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { DB } from '../../db/schema.js';
import { codeFromRow } from './code-store.js';
import type { AffiliateCode, AffiliateStats, AffiliateStatsSource, TraderStats } from '../../providers/ports/affiliate.js';
import { affiliateTotals, traderRewards, usd, type TraderVolume } from './reward-math.js';

interface VolumeRow {
  trader: Uint8Array;
  linked_since: Date | string;
  first_at: Date | string | null;
  last_at: Date | string | null;
  total: number | string | null;
  window_volume: number | string | null;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function volumeOf(row: VolumeRow): TraderVolume {
  return { firstTradeAt: date(row.first_at), lastTradeAt: date(row.last_at), windowVolume: Number(row.window_volume ?? 0), totalVolume: Number(row.total ?? 0) };
}

export class ComputedAffiliateStats implements AffiliateStatsSource {
  readonly name = 'computed';
  /**
   * @param countingChains the chains whose trades count (see `countingChains`); absent: every chain's valued trades
   */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly countingChains: number[] | null = null,
  ) {}

  /**
   * Per bound trader (of a code, or one trader): volume since binding and inside the time-cap window, of the
   * counting chains only. A self-trade does not count: a trade paying a wallet of the same circle (the code's own
   * wallet or a trader bound to the same code) as its receiver, or matched in the same settlement against such a
   * wallet's trade in the opposite direction.
   */
  private async volumes(filter: { code: string } | { trader: Address }, timeCapDays: number): Promise<VolumeRow[]> {
    const where = 'code' in filter ? sql`b.code = ${filter.code}` : sql`b.trader = ${toBytes(filter.trader)}`;
    const chains = this.countingChains === null ? sql`true` : this.countingChains.length === 0 ? sql`false` : sql`v.chain_id in (${sql.join(this.countingChains)})`;
    const circle = (wallet: ReturnType<typeof sql>) =>
      sql`(${wallet} = c.wallet or exists (select 1 from affiliate_bindings ob where ob.trader = ${wallet} and ob.code = b.code))`;
    // who traded: for an eth-flow order whoever placed it (the trade's owner is the contract)
    const traderOf = (tr: string) =>
      sql`coalesce((select ef.sender from ethflow_placements ef where ef.chain_id = ${sql.ref(`${tr}.chain_id`)} and ef.order_uid = ${sql.ref(`${tr}.order_uid`)} limit 1), ${sql.ref(`${tr}.owner`)})`;
    const result = await sql<VolumeRow>`
      with t as (
        select b.trader, b.linked_since, v.block_timestamp, v.usd_volume,
               min(v.block_timestamp) over (partition by b.trader) as first_at
        from affiliate_bindings b
        join affiliate_codes c on c.code = b.code
        left join affiliate_trade_volumes v
          on v.trader = b.trader and coalesce(v.order_created_at, v.block_timestamp) >= b.linked_since and ${chains}
          and not exists (
            select 1 from trades tr
            left join orders o on o.chain_id = tr.chain_id and o.uid = tr.order_uid
            where tr.chain_id = v.chain_id and tr.block_number = v.block_number and tr.log_index = v.log_index
              and ((o.receiver is not null and o.receiver <> ${traderOf('tr')} and ${circle(sql.ref('o.receiver'))})
                or exists (
                  select 1 from trades other
                  where other.chain_id = tr.chain_id and other.tx_hash = tr.tx_hash and ${traderOf('other')} <> ${traderOf('tr')}
                    and other.sell_token = tr.buy_token and other.buy_token = tr.sell_token and ${circle(traderOf('other'))})))
        where ${where})
      select trader, linked_since, first_at, max(block_timestamp) as last_at, sum(usd_volume) as total,
             sum(usd_volume) filter (where block_timestamp < first_at + make_interval(days => ${timeCapDays}::int)) as window_volume
      from t group by trader, linked_since, first_at`.execute(this.db);
    return result.rows;
  }

  private async paidOut(address: Address, role: 'affiliate' | 'trader'): Promise<number> {
    const r = await this.db.selectFrom('affiliate_payouts').select((eb) => eb.fn.sum<number | string | null>('usd').as('paid')).where('address', '=', toBytes(address)).where('role', '=', role).executeTakeFirst();
    return usd(Number(r?.paid ?? 0));
  }

  /** time of the newest indexed block whose trades are all valued (null before the first pass) */
  async lastUpdatedAt(): Promise<Date | null> {
    const r = await this.db.selectFrom('affiliate_progress').select((eb) => eb.fn.max('block_timestamp').as('at')).where('name', 'like', 'chain:%').executeTakeFirst();
    return r?.at ? new Date(r.at as Date | string) : null;
  }

  async affiliateStats(wallet: Address): Promise<AffiliateStats | null> {
    const row = await this.db.selectFrom('affiliate_codes').selectAll().where('wallet', '=', toBytes(wallet)).executeTakeFirst();
    if (!row) return null;
    const code = codeFromRow(row);
    const [rows, paid, updated] = await Promise.all([this.volumes({ code: code.code }, code.timeCapDays), this.paidOut(code.walletAddress, 'affiliate'), this.lastUpdatedAt()]);
    const now = updated ?? new Date();
    const totals = affiliateTotals(code, rows.map(volumeOf), now);
    return {
      affiliate_address: code.walletAddress,
      referrer_code: code.code,
      total_volume: totals.totalVolume,
      trigger_volume: code.triggerVolume,
      total_earned: totals.totalEarned,
      paid_out: paid,
      next_payout: usd(Math.max(0, totals.totalEarned - paid)),
      left_to_next_reward: totals.leftToNextReward,
      active_traders: totals.activeTraders,
      total_traders: totals.totalTraders,
      lastUpdatedAt: now.toISOString(),
    };
  }

  async traderStats(trader: Address): Promise<TraderStats | null> {
    const binding = await this.db
      .selectFrom('affiliate_bindings as b')
      .innerJoin('affiliate_codes as c', 'c.code', 'b.code')
      .selectAll('c')
      .select(['b.linked_since', 'b.trader'])
      .where('b.trader', '=', toBytes(trader))
      .executeTakeFirst();
    if (!binding) return null;
    const code: AffiliateCode = codeFromRow(binding);
    const [rows, paid, updated] = await Promise.all([this.volumes({ trader }, code.timeCapDays), this.paidOut(trader, 'trader'), this.lastUpdatedAt()]);
    const now = updated ?? new Date();
    const volume = rows[0] ? volumeOf(rows[0]) : { firstTradeAt: null, lastTradeAt: null, windowVolume: 0, totalVolume: 0 };
    const r = traderRewards(code, volume, now);
    return {
      trader_address: toHex(binding.trader),
      bound_referrer_code: code.code,
      linked_since: new Date(binding.linked_since).toISOString(),
      rewards_end: r.rewardsEnd?.toISOString() ?? null,
      eligible_volume: r.eligibleVolume,
      left_to_next_rewards: r.leftToNextReward,
      trigger_volume: code.triggerVolume,
      total_earned: r.traderEarned,
      paid_out: paid,
      next_payout: usd(Math.max(0, r.traderEarned - paid)),
      lastUpdatedAt: now.toISOString(),
    };
  }
}
