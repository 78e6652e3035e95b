/**
 * Notification routes of the auxiliary API (spec §4.3), errors `{message}`, every route behind the CMS_ENABLED gate:
 *
 *   GET    /accounts/{account}/notifications?limit=&offset=    → [Notification], newest first, cached 300 s
 *   POST   /accounts/{account}/subscriptions                    → 201 {id, channel, target, types, createdAt, secret?}
 *   GET    /accounts/{account}/subscriptions                    → [Subscription] (public: targets masked, no secrets; last delivery error, scrubbed of the target)
 *   POST   /accounts/{account}/subscriptions/{id}/confirm  {code} → 204 (email: the code mailed to the address)
 *   DELETE /accounts/{account}/subscriptions/{id}  {deadline, signature} → 204
 *   GET    /notifications/vapid-public-key                      → {publicKey}
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DB } from '../../db/schema.js';
import { AuxError } from '../../http/errors.js';
import { integrationGate } from '../../http/integration-gate.js';
import { sendJson, type HttpServer } from '../../http/server.js';
import { NOTIFICATION_TYPES } from './notification-types.js';
import { listNotifications } from './notification-store.js';
import { NotificationError, type NotificationErrorKind, type SubscriptionService } from './subscription-service.js';
import { maskTarget, scrubTarget } from './target-mask.js';

export interface NotificationRoutesContext {
  db: Kysely<DB>;
  subscriptions: SubscriptionService;
  /** CMS_ENABLED */
  enabled: boolean;
  /** the VAPID public key browsers subscribe with (null: web push unavailable) */
  vapidPublicKey: () => string | null;
}

const STATUS: Record<NotificationErrorKind, number> = { invalid: 400, unauthorized: 401, conflict: 409, not_found: 404, unavailable: 503 };
export const NOTIFICATIONS_BODY_LIMIT = 16 * 1024;
const MAX_LIMIT = 1000;

const Message = Type.Object({ message: Type.String() });
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Message]));
const AccountParams = Type.Object({ account: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x-prefixed 20-byte address, any letter case' }) });
const Signature = Type.String({ pattern: '^0x([0-9a-fA-F]{2}){1,4096}$', description: 'EIP-712 signature by the account (65-byte ECDSA, or what its ERC-1271 wallet accepts)' });
const Deadline = Type.Integer({ minimum: 0, description: 'unix seconds; in the future and at most 1 h away' });
const TypeName = Type.Union(NOTIFICATION_TYPES.map((t) => Type.Literal(t)));
const Channel = Type.Union([Type.Literal('webhook'), Type.Literal('telegram'), Type.Literal('webpush'), Type.Literal('email')]);

export const NotificationSchema = Type.Object({
  id: Type.String(),
  account: Type.String(),
  type: TypeName,
  message: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  metadata: Type.Object({ orderId: Type.String(), chainId: Type.Integer() }, { additionalProperties: true }),
});

const SubscribeBody = Type.Object(
  {
    channel: Channel,
    target: Type.String({ minLength: 1, maxLength: 4096, description: 'webhook: http(s) URL; telegram: chat id; webpush: PushSubscription JSON as a string; email: address' }),
    types: Type.Optional(Type.Array(TypeName, { maxItems: NOTIFICATION_TYPES.length * 2, description: 'default: every type' })),
    deadline: Deadline,
    signature: Signature,
  },
  {
    additionalProperties: false,
    description:
      'signed (EIP-712, domain {name: "batchbook Notifications", version: "1"}) as Subscribe(address account,string channel,string target,string[] types,uint256 deadline) with `types` exactly as sent, or without `types` as Subscribe(address account,string channel,string target,uint256 deadline); at most 10 subscriptions per account; an email subscription delivers once confirmed with the code mailed to it',
  },
);

const CreatedSchema = Type.Object({
  id: Type.String(),
  channel: Channel,
  target: Type.String(),
  types: Type.Array(TypeName),
  createdAt: Type.String({ format: 'date-time' }),
  secret: Type.Optional(Type.String({ description: 'webhooks: the Standard Webhooks signing secret (whsec_...), shown once' })),
  confirmed: Type.Boolean({ description: 'false: deliveries start once the target confirms (email: POST the mailed code to .../confirm)' }),
});

const SubscriptionSchema = Type.Object({
  id: Type.String(),
  channel: Channel,
  target: Type.String({ description: 'masked: a webhook or push endpoint as https://host/***, an email as j***@x.org, a Telegram chat id as ***89' }),
  types: Type.Array(TypeName),
  createdAt: Type.String({ format: 'date-time' }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'the last delivery failure (without the target)' }),
  lastErrorAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  failedDeliveries: Type.Integer({ description: 'deliveries given up on (dead letters)' }),
  pendingDeliveries: Type.Integer(),
  confirmed: Type.Boolean({ description: 'deliveries start once confirmed' }),
});

const UnsubscribeBody = Type.Object(
  { deadline: Deadline, signature: Signature },
  { additionalProperties: false, description: 'signed as Unsubscribe(address account,string id,uint256 deadline)' },
);

function accountOf(params: { account: string }): Address {
  return params.account.toLowerCase() as Address;
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof NotificationError) throw new AuxError(STATUS[err.kind], err.message);
    throw err;
  }
}

export function registerNotificationRoutes(server: HttpServer, ctx: NotificationRoutesContext): void {
  const gate = integrationGate(ctx.enabled, 'CMS_ENABLED');
  const tags = ['notifications'];

  server.get('/accounts/:account/notifications', {
    preHandler: gate,
    config: { api: 'aux' },
    schema: {
      tags,
      summary: "The account's notifications of every network, newest first",
      params: AccountParams,
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 100 })), offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })) }),
      response: { 200: Type.Array(NotificationSchema), ...errors(400, 500, 503) },
    },
  }, async (request, reply) => {
    const list = await listNotifications(ctx.db, accountOf(request.params), request.query.limit ?? 100, request.query.offset ?? 0);
    reply.header('cache-control', 'public, max-age=300');
    return sendJson(reply, 200, list);
  });

  server.post('/accounts/:account/subscriptions', {
    preHandler: gate,
    bodyLimit: NOTIFICATIONS_BODY_LIMIT,
    config: { api: 'aux' },
    schema: { tags, summary: 'Subscribe a channel to the account’s notifications (signed by the account)', params: AccountParams, body: SubscribeBody, response: { 201: CreatedSchema, ...errors(400, 401, 409, 503) } },
  }, async (request, reply) => {
    const created = await mapped(() => ctx.subscriptions.subscribe(accountOf(request.params), { ...request.body, signature: request.body.signature as Hex }));
    return sendJson(reply, 201, created);
  });

  server.get('/accounts/:account/subscriptions', {
    preHandler: gate,
    config: { api: 'aux' },
    schema: { tags, summary: 'The account’s subscriptions (public: targets masked, no secrets), with the last delivery error', params: AccountParams, response: { 200: Type.Array(SubscriptionSchema), ...errors(400, 503) } },
  }, async (request, reply) => {
    const list = await ctx.subscriptions.list(accountOf(request.params));
    reply.header('cache-control', 'no-store');
    return sendJson(
      reply,
      200,
      list.map((s) => ({
        ...s,
        target: maskTarget(s.channel, s.target),
        types: s.types ?? [...NOTIFICATION_TYPES],
        createdAt: s.createdAt.toISOString(),
        lastError: s.lastError === null ? null : scrubTarget(s.channel, s.target, s.lastError),
        lastErrorAt: s.lastErrorAt?.toISOString() ?? null,
      })),
    );
  });

  server.post('/accounts/:account/subscriptions/:id/confirm', {
    preHandler: gate,
    bodyLimit: NOTIFICATIONS_BODY_LIMIT,
    config: { api: 'aux' },
    schema: {
      tags,
      summary: 'Confirm a subscription with the code sent to its target (email)',
      params: Type.Object({ account: AccountParams.properties.account, id: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errors(400, 401, 404, 503) },
    },
  }, async (request, reply) => {
    await mapped(() => ctx.subscriptions.confirm(accountOf(request.params), request.params.id, request.body.code));
    return reply.code(204).send(null);
  });

  server.delete('/accounts/:account/subscriptions/:id', {
    preHandler: gate,
    bodyLimit: NOTIFICATIONS_BODY_LIMIT,
    config: { api: 'aux' },
    schema: {
      tags,
      summary: 'Remove a subscription (signed by the account)',
      params: Type.Object({ account: AccountParams.properties.account, id: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: UnsubscribeBody,
      response: { 204: Type.Null(), ...errors(400, 401, 404, 503) },
    },
  }, async (request, reply) => {
    await mapped(() => ctx.subscriptions.unsubscribe(accountOf(request.params), request.params.id, { deadline: request.body.deadline, signature: request.body.signature as Hex }));
    return reply.code(204).send(null);
  });

  server.get('/notifications/vapid-public-key', {
    preHandler: gate,
    config: { api: 'aux' },
    schema: { tags, summary: 'The VAPID public key browsers subscribe to web push with', response: { 200: Type.Object({ publicKey: Type.String() }), ...errors(503) } },
  }, async (_request, reply) => {
    const publicKey = ctx.vapidPublicKey();
    if (!publicKey) throw new AuxError(503, 'web push is not available on this server');
    return sendJson(reply, 200, { publicKey });
  });
}
