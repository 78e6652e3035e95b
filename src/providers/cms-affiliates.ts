/**
 * Affiliate codes in a Strapi-style headless CMS (reference auxiliary.md §3.3, §4; `CMS_BASE_URL` is the CMS's
 * REST root, e.g. https://cms.example.org/api, and `CMS_API_KEY` its API token):
 *
 *   GET  {base}/affiliates?filters[walletAddress][$eq]=<lowercase>&pagination[pageSize]=1   Authorization: Bearer <key>
 *   GET  {base}/affiliates?filters[code][$eq]=<UPPER>&pagination[pageSize]=1
 *   → {data: [{id, attributes: {code, walletAddress, enabled, rewardAmount, …, createdAt}}], meta}   (Strapi v4;
 *     v5's flat `{data: [{id, documentId, code, …}]}` is read too)
 *   POST {base}/affiliates  {data: {code, walletAddress, signedMessage, enabled: true, <terms>}}
 *   → 200/201 {data: {...}}; 400 (unique-field ValidationError) / 409 → the code or the wallet is taken
 *
 * The CMS's unique fields make registration atomic; which one conflicted is read back afterwards. Terms missing
 * from a row (edited in the CMS) fall back to the configured ones. Transport failures and unexpected answers
 * reject with ProviderError (the service answers 502).
 */
import type { Address } from 'viem';
import type { AffiliateCode, AffiliateCodeStore, AffiliateTerms, NewAffiliateCode, RegisterOutcome } from './ports/affiliate.js';
import { expectOk, isRecord, malformed, parseAddress, providerRequest, type FetchLike } from './provider-http.js';

export interface CmsAffiliateCodesOptions {
  baseUrl: string;
  apiKey: string;
  /** terms for rows that do not carry them */
  defaultTerms: AffiliateTerms;
  timeoutMs?: number;
  fetch?: FetchLike;
}

const NAME = 'cms';
const TERM_KEYS = ['rewardAmount', 'triggerVolume', 'timeCapDays', 'volumeCap', 'revenueSplitAffiliatePct', 'revenueSplitTraderPct', 'revenueSplitDaoPct'] as const;

/** One CMS entry (v4 `{id, attributes}` or v5 flat) as an AffiliateCode, or null when it does not fit. */
export function affiliateFromCmsEntry(entry: unknown, defaults: AffiliateTerms): AffiliateCode | null {
  if (!isRecord(entry)) return null;
  const fields = isRecord(entry.attributes) ? entry.attributes : entry;
  const wallet = parseAddress(fields.walletAddress);
  const createdAt = typeof fields.createdAt === 'string' ? new Date(fields.createdAt) : null;
  if (typeof fields.code !== 'string' || !wallet || !createdAt || Number.isNaN(createdAt.getTime())) return null;
  const terms = { ...defaults };
  for (const key of TERM_KEYS) {
    const v = typeof fields[key] === 'string' ? Number(fields[key]) : fields[key];
    if (typeof v === 'number' && Number.isFinite(v)) terms[key] = v;
  }
  return { code: fields.code.toUpperCase(), walletAddress: wallet as Address, enabled: fields.enabled !== false, createdAt, ...terms };
}

export class CmsAffiliateCodes implements AffiliateCodeStore {
  readonly name = NAME;
  private readonly base: string;
  constructor(private readonly options: CmsAffiliateCodesOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  private request(path: string, init: { method?: 'GET' | 'POST'; body?: string } = {}) {
    return providerRequest(NAME, `${this.base}${path}`, { ...init, headers: { authorization: `Bearer ${this.options.apiKey}` } }, { timeoutMs: this.options.timeoutMs ?? 10_000, fetch: this.options.fetch });
  }

  private async findOne(field: 'walletAddress' | 'code', value: string): Promise<AffiliateCode | null> {
    const query = `filters[${field}][$eq]=${encodeURIComponent(value)}&pagination[pageSize]=1`;
    const res = await this.request(`/affiliates?${query}`);
    expectOk(NAME, res, 'affiliate lookup');
    const body = res.body;
    if (!isRecord(body) || !Array.isArray(body.data)) throw malformed(NAME, 'affiliate lookup: expected {data: [...]}');
    if (body.data.length === 0) return null;
    const found = affiliateFromCmsEntry(body.data[0], this.options.defaultTerms);
    if (!found) throw malformed(NAME, 'affiliate lookup: an entry without code, walletAddress or createdAt');
    return found;
  }

  byWallet(wallet: Address): Promise<AffiliateCode | null> {
    return this.findOne('walletAddress', wallet.toLowerCase());
  }

  byCode(code: string): Promise<AffiliateCode | null> {
    return this.findOne('code', code.toUpperCase());
  }

  async register(input: NewAffiliateCode): Promise<RegisterOutcome> {
    const data = { code: input.code, walletAddress: input.walletAddress.toLowerCase(), signedMessage: input.signedMessage, enabled: true, ...input.terms };
    const res = await this.request('/affiliates', { method: 'POST', body: JSON.stringify({ data }) });
    if (res.status === 400 || res.status === 409) {
      // a unique field refused it: say which (the wallet first, as our own store does)
      if (await this.byWallet(input.walletAddress)) return { ok: false, conflict: 'wallet' };
      if (await this.byCode(input.code)) return { ok: false, conflict: 'code' };
      throw malformed(NAME, `affiliate create answered HTTP ${res.status} but neither the code nor the wallet is taken`);
    }
    expectOk(NAME, res, 'affiliate create');
    const created = isRecord(res.body) ? affiliateFromCmsEntry(res.body.data, input.terms) : null;
    if (!created) throw malformed(NAME, 'affiliate create: expected {data: {code, walletAddress, createdAt, ...}}');
    return { ok: true, code: created };
  }
}
