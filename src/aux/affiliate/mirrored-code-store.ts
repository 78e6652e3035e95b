/**
 * An external code store (the CMS) as the source of truth, mirrored into our database, with uniqueness enforced by
 * us whatever the CMS enforces:
 * - a registration first reserves the code and the wallet in our database (unique constraints: concurrent
 *   registrations of one code or one wallet cannot both pass), then checks the CMS holds neither (codes created
 *   there directly), then creates it there; if the CMS refuses or fails, the reservation is released;
 * - a code read through the CMS is copied locally only when our database does not have it yet (no write per read),
 *   so trader bindings and statistics, which join our own tables, see codes created in the CMS directly once our
 *   API reads them (the frontend checks a code with `/ref-codes/{code}` before trading with it).
 */
import type { Address } from 'viem';
import type { DatabaseCodeStore } from './code-store.js';
import type { AffiliateCode, AffiliateCodeStore, NewAffiliateCode, RegisterOutcome } from '../../providers/ports/affiliate.js';

export class MirroredCodeStore implements AffiliateCodeStore {
  readonly name: string;
  constructor(private readonly primary: AffiliateCodeStore, private readonly local: DatabaseCodeStore) {
    this.name = `${primary.name}+mirror`;
  }

  async register(input: NewAffiliateCode): Promise<RegisterOutcome> {
    const reserved = await this.local.register(input);
    if (!reserved.ok) return reserved;
    let outcome: RegisterOutcome;
    try {
      if (await this.primary.byWallet(input.walletAddress)) outcome = { ok: false, conflict: 'wallet' };
      else if (await this.primary.byCode(input.code)) outcome = { ok: false, conflict: 'code' };
      else outcome = await this.primary.register(input);
    } catch (err) {
      await this.local.release(input.code, input.walletAddress);
      throw err;
    }
    if (!outcome.ok) await this.local.release(input.code, input.walletAddress);
    return outcome;
  }

  async byWallet(wallet: Address): Promise<AffiliateCode | null> {
    return this.mirrored(await this.primary.byWallet(wallet));
  }

  async byCode(code: string): Promise<AffiliateCode | null> {
    return this.mirrored(await this.primary.byCode(code));
  }

  private async mirrored(code: AffiliateCode | null): Promise<AffiliateCode | null> {
    if (code && !(await this.local.byCode(code.code))) await this.local.mirror(code, '0x');
    return code;
  }
}
