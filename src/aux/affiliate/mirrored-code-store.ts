/**
 * An external code store (the CMS) as the source of truth, mirrored into our database: every code registered or
 * read through it is copied locally (existing rows win), so trader bindings and statistics, which join our own
 * tables, see codes kept in the CMS — including ones created there directly, once our API reads them (the
 * frontend checks a code with `/ref-codes/{code}` before trading with it).
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
    const outcome = await this.primary.register(input);
    if (outcome.ok) await this.local.mirror(outcome.code, input.signedMessage);
    return outcome;
  }

  async byWallet(wallet: Address): Promise<AffiliateCode | null> {
    return this.mirrored(await this.primary.byWallet(wallet));
  }

  async byCode(code: string): Promise<AffiliateCode | null> {
    return this.mirrored(await this.primary.byCode(code));
  }

  private async mirrored(code: AffiliateCode | null): Promise<AffiliateCode | null> {
    if (code) await this.local.mirror(code, '0x');
    return code;
  }
}
