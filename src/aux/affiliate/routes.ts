/**
 * Affiliate routes (spec §4.2 and the upstream extra `/ref-codes/{code}`), auxiliary API: errors are `{message}`.
 * Every route sits behind the content integration gate (CMS_ENABLED=false → 503).
 *
 * | route | success | errors |
 * |---|---|---|
 * | POST /affiliate/{address} | 201 {code, createdAt} | 400 malformed body / code / address mismatch, 401 signature, 409 code taken or wallet has a code, 502 code store unreachable |
 * | GET /affiliate/{address} | 200 affiliate information | 400, 404 no code |
 * | GET /affiliate/affiliate-stats/{address} | 200 affiliate statistics | 400, 404 no code |
 * | GET /affiliate/trader-stats/{address} | 200 trader statistics | 400, 404 not bound |
 * | GET /ref-codes/{code} | 200 the trader's terms | 400 malformed, 404 unknown |
 */
import { AuxError } from '../../http/errors.js';
import { integrationGate } from '../../http/integration-gate.js';
import { sendJson, type HttpServer } from '../../http/server.js';
import { AFFILIATE_ERROR_STATUS, AffiliateError } from './affiliate-error.js';
import type { AffiliateService, RegistrationInput } from './affiliate-service.js';
import { AddressParams, AffiliateInfo, AffiliateStatsSchema, CodeParams, MessageSchema, RefCodeInfo, RegistrationBody, RegistrationResult, TraderStatsSchema } from './schemas.js';

export interface AffiliateRouteContext {
  service: AffiliateService;
  /** CMS_ENABLED */
  enabled: boolean;
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AffiliateError) throw new AuxError(AFFILIATE_ERROR_STATUS[err.kind], err.message);
    throw err;
  }
}

export function registerAffiliateRoutes(server: HttpServer, ctx: AffiliateRouteContext): void {
  const gate = integrationGate(ctx.enabled, 'CMS_ENABLED');
  const common = { preHandler: gate, config: { api: 'aux' as const } };
  const errors = { 400: MessageSchema, 404: MessageSchema, 500: MessageSchema, 502: MessageSchema, 503: MessageSchema };
  const tags = ['affiliate'];
  const { service } = ctx;

  server.post(
    '/affiliate/:address',
    {
      ...common,
      bodyLimit: 32 * 1024,
      schema: {
        tags,
        summary: 'Register an affiliate code for a wallet (signed with EIP-712)',
        description:
          'The code is trimmed and upper-cased, then must be 5–20 of A-Z 0-9 - _. The path address must equal walletAddress (any case). ' +
          'signedMessage: EOA, ERC-1271 or ERC-6492 signature, checked on every chain served. Each code and each wallet can be registered once.',
        params: AddressParams,
        body: RegistrationBody,
        response: { 201: RegistrationResult, 401: MessageSchema, 409: MessageSchema, ...errors },
      },
    },
    async (req, reply) => {
      const { address } = req.params as { address: string };
      const result = await mapped(() => service.register(address, req.body as RegistrationInput));
      return sendJson(reply, 201, result);
    },
  );

  server.get(
    '/affiliate/:address',
    { ...common, schema: { tags, summary: 'The affiliate code of a wallet and its reward terms', params: AddressParams, response: { 200: AffiliateInfo, ...errors } } },
    async (req, reply) => {
      const { address } = req.params as { address: string };
      const a = await mapped(() => service.affiliate(address));
      return sendJson(reply, 200, {
        code: a.code,
        createdAt: a.createdAt.toISOString(),
        rewardAmount: a.rewardAmount,
        triggerVolume: a.triggerVolume,
        timeCapDays: a.timeCapDays,
        volumeCap: a.volumeCap,
        revenueSplitAffiliatePct: a.revenueSplitAffiliatePct,
        revenueSplitTraderPct: a.revenueSplitTraderPct,
        revenueSplitDaoPct: a.revenueSplitDaoPct,
      });
    },
  );

  server.get(
    '/affiliate/affiliate-stats/:address',
    {
      ...common,
      schema: { tags, summary: 'Statistics of an affiliate: referred volume, rewards, payouts, traders', description: 'Computed from our own settled trades; moves within seconds of a settlement.', params: AddressParams, response: { 200: AffiliateStatsSchema, ...errors } },
    },
    async (req, reply) => sendJson(reply, 200, await mapped(() => service.affiliateStats((req.params as { address: string }).address))),
  );

  server.get(
    '/affiliate/trader-stats/:address',
    {
      ...common,
      schema: { tags, summary: 'Statistics of a referred trader: binding, eligible volume, rewards, payouts', params: AddressParams, response: { 200: TraderStatsSchema, ...errors } },
    },
    async (req, reply) => sendJson(reply, 200, await mapped(() => service.traderStats((req.params as { address: string }).address))),
  );

  server.get(
    '/ref-codes/:code',
    { ...common, schema: { tags, summary: 'Check a referral code and read the trader’s terms', params: CodeParams, response: { 200: RefCodeInfo, ...errors } } },
    async (req, reply) => sendJson(reply, 200, await mapped(() => service.refCode((req.params as { code: string }).code))),
  );
}
