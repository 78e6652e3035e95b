/**
 * Affiliate codes in our own database. Uniqueness of the code and of the wallet is the database's (primary key
 * and unique constraint): `insert … on conflict do nothing` either inserts or reports which one was taken, so
 * concurrent registrations never race and never fail with a 500.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Address } from 'viem';
import { toBytes, toHex } from '../../db/codec.js';
import type { AffiliateCodesTable, DB } from '../../db/schema.js';
import type { AffiliateCode, AffiliateCodeStore, NewAffiliateCode, RegisterOutcome } from '../../providers/ports/affiliate.js';

export function codeFromRow(row: Selectable<AffiliateCodesTable>): AffiliateCode {
  return {
    code: row.code,
    walletAddress: toHex(row.wallet) as Address,
    enabled: row.enabled,
    createdAt: new Date(row.created_at),
    rewardAmount: Number(row.reward_amount),
    triggerVolume: Number(row.trigger_volume),
    timeCapDays: Number(row.time_cap_days),
    volumeCap: Number(row.volume_cap),
    revenueSplitAffiliatePct: Number(row.revenue_split_affiliate_pct),
    revenueSplitTraderPct: Number(row.revenue_split_trader_pct),
    revenueSplitDaoPct: Number(row.revenue_split_dao_pct),
  };
}

export class DatabaseCodeStore implements AffiliateCodeStore {
  readonly name = 'database';
  constructor(private readonly db: Kysely<DB>) {}

  async register(input: NewAffiliateCode, createdAt?: Date): Promise<RegisterOutcome> {
    const { terms } = input;
    const row = await this.db
      .insertInto('affiliate_codes')
      .values({
        code: input.code,
        wallet: toBytes(input.walletAddress),
        signed_message: toBytes(input.signedMessage),
        reward_amount: terms.rewardAmount,
        trigger_volume: terms.triggerVolume,
        time_cap_days: terms.timeCapDays,
        volume_cap: terms.volumeCap,
        revenue_split_affiliate_pct: terms.revenueSplitAffiliatePct,
        revenue_split_trader_pct: terms.revenueSplitTraderPct,
        revenue_split_dao_pct: terms.revenueSplitDaoPct,
        ...(createdAt ? { created_at: createdAt } : {}),
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return { ok: true, code: codeFromRow(row) };
    // the conflicting row is committed (on conflict waits for it): tell which constraint it was
    return { ok: false, conflict: (await this.byWallet(input.walletAddress)) ? 'wallet' : 'code' };
  }

  /** Copies a code kept elsewhere (the external CMS) so bindings and statistics can join it; existing rows win. */
  async mirror(code: AffiliateCode, signedMessage: `0x${string}`): Promise<void> {
    await this.register({ code: code.code, walletAddress: code.walletAddress, signedMessage, terms: code }, code.createdAt);
  }

  /** Releases a reservation (a registration another store then refused): the code of that wallet, if nobody is bound to it. */
  async release(code: string, wallet: Address): Promise<void> {
    await this.db
      .deleteFrom('affiliate_codes')
      .where('code', '=', code)
      .where('wallet', '=', toBytes(wallet))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('affiliate_bindings').select('trader').where('affiliate_bindings.code', '=', code))))
      .execute();
  }

  async byWallet(wallet: Address): Promise<AffiliateCode | null> {
    const row = await this.db.selectFrom('affiliate_codes').selectAll().where('wallet', '=', toBytes(wallet)).executeTakeFirst();
    return row ? codeFromRow(row) : null;
  }

  async byCode(code: string): Promise<AffiliateCode | null> {
    const row = await this.db.selectFrom('affiliate_codes').selectAll().where('code', '=', code).executeTakeFirst();
    return row ? codeFromRow(row) : null;
  }

  async count(): Promise<number> {
    const r = await sql<{ n: string | number }>`select count(*) as n from affiliate_codes`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }
}
