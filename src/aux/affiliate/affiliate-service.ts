/**
 * The affiliate program (spec §4.2; issue 10): registration of codes (normalised, signature-verified, unique),
 * the code's information, the public code check, and the statistics.
 *
 * @example
 *   const service = new AffiliateService({ codes, stats, signature, terms });
 *   await service.register('0xabc…', { walletAddress: '0xAbC…', code: 'my-code', signedMessage: '0x…' });
 */
import type { Address, Hex } from 'viem';
import { ProviderError } from '../../providers/data-source.js';
import { normalizeAffiliateCode } from './affiliate-code.js';
import { AffiliateError } from './affiliate-error.js';
import type { AffiliateCode, AffiliateCodeStore, AffiliateStats, AffiliateStatsSource, AffiliateTerms, TraderStats } from '../../providers/ports/affiliate.js';
import type { RegistrationSignature } from './registration-signature.js';
import { usd } from './reward-math.js';

export interface AffiliateServiceOptions {
  codes: AffiliateCodeStore;
  /** asked in order: the first that answers wins; a failing source falls through to the next */
  stats: readonly AffiliateStatsSource[];
  signature: Pick<RegistrationSignature, 'verify'>;
  /** terms copied onto new codes */
  terms: AffiliateTerms;
  /** told when a statistics source fails (the next one answers) */
  onSourceError?: (source: string, err: unknown) => void;
}

export interface RegistrationInput {
  walletAddress: string;
  code: string;
  signedMessage: string;
}

/** GET /ref-codes/{code} */
export interface RefCodeInfo {
  code: string;
  traderRewardAmount: number;
  triggerVolume: number;
  timeCapDays: number;
  volumeCap: number;
}

const lower = (a: string) => a.toLowerCase() as Address;

export class AffiliateService {
  constructor(private readonly options: AffiliateServiceOptions) {}

  async register(pathAddress: string, input: RegistrationInput): Promise<{ code: string; createdAt: string }> {
    if (lower(pathAddress) !== lower(input.walletAddress)) throw new AffiliateError('InvalidInput', 'Affiliate wallet address mismatch: the path address must equal walletAddress');
    const code = normalizeAffiliateCode(input.code);
    if (!code) throw new AffiliateError('InvalidInput', 'Affiliate code format is invalid: 5 to 20 of A-Z, 0-9, "-" and "_" (any case)');
    const wallet = lower(input.walletAddress);
    const valid = await this.options.signature.verify(wallet, code, input.signedMessage as Hex);
    if (!valid) throw new AffiliateError('InvalidSignature', 'Affiliate has invalid signature: signedMessage does not verify for walletAddress');
    const outcome = await this.store(() => this.options.codes.register({ code, walletAddress: wallet, signedMessage: input.signedMessage as Hex, terms: this.options.terms }));
    if (!outcome.ok) {
      throw new AffiliateError('Conflict', outcome.conflict === 'wallet' ? 'Affiliate wallet address already bound to a code' : 'Affiliate code already taken');
    }
    return { code: outcome.code.code, createdAt: outcome.code.createdAt.toISOString() };
  }

  async affiliate(address: string): Promise<AffiliateCode> {
    const found = await this.store(() => this.options.codes.byWallet(lower(address)));
    if (!found) throw new AffiliateError('NotFound', 'Affiliate not found');
    return found;
  }

  async refCode(input: string): Promise<RefCodeInfo> {
    const code = normalizeAffiliateCode(input);
    if (!code) throw new AffiliateError('InvalidInput', 'Affiliate code format is invalid: 5 to 20 of A-Z, 0-9, "-" and "_" (any case)');
    const found = await this.store(() => this.options.codes.byCode(code));
    if (!found || !found.enabled) throw new AffiliateError('NotFound', 'Affiliate code not found');
    return {
      code: found.code,
      traderRewardAmount: usd((found.rewardAmount * found.revenueSplitTraderPct) / 100),
      triggerVolume: found.triggerVolume,
      timeCapDays: found.timeCapDays,
      volumeCap: found.volumeCap,
    };
  }

  async affiliateStats(address: string): Promise<AffiliateStats> {
    const stats = await this.firstAnswer((s) => s.affiliateStats(lower(address)));
    if (!stats) throw new AffiliateError('NotFound', 'Affiliate stats not found: the wallet has no code');
    return stats;
  }

  async traderStats(address: string): Promise<TraderStats> {
    const stats = await this.firstAnswer((s) => s.traderStats(lower(address)));
    if (!stats) throw new AffiliateError('NotFound', 'Trader stats not found: the wallet is not bound to a code');
    return stats;
  }

  /** the code store's transient failures (an unreachable CMS) become Unavailable (502) */
  private async store<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ProviderError) throw new AffiliateError('Unavailable', `the affiliate code store is unavailable (${err.message}); try again`, { cause: err });
      throw err;
    }
  }

  private async firstAnswer<T>(ask: (source: AffiliateStatsSource) => Promise<T | null>): Promise<T | null> {
    const sources = this.options.stats;
    for (let i = 0; i < sources.length; i++) {
      try {
        const answer = await ask(sources[i]!);
        if (answer) return answer;
      } catch (err) {
        if (i === sources.length - 1) throw err;
        this.options.onSourceError?.(sources[i]!.name, err);
      }
    }
    return null;
  }
}
