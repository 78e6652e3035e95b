/**
 * Subscriptions authorised by the account's own signature (spec §4.3): checks the channel (known, configured),
 * the deadline (in the future, at most an hour away) and the EIP-712 signature (over the types too when sent)
 * first, and only then the types and the target (the channel's own rules): an unsigned request learns nothing
 * about any target. At most 10 subscriptions per account. An email subscription delivers only once the address
 * confirmed it with the code mailed to it once; creating a webhook subscription never contacts the target.
 * Throws NotificationError; the routes map it to `{message}` with its status.
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DB } from '../../db/schema.js';
import type { ChannelName, NotificationChannel } from '../../notify/channels/channel.js';
import { generateWebhookSecret } from '../../notify/channels/webhook-channel.js';
import { NOTIFICATION_TYPES } from './notification-types.js';
import { randomBytes } from 'node:crypto';
import { isSignedBy, subscriptionRequestTypedData, unsubscribeTypedData, type ContractSignatureCheck } from './subscription-signatures.js';
import {
  confirmSubscription,
  deleteSubscription,
  DuplicateSubscriptionError,
  insertSubscription,
  listSubscriptions,
  MAX_SUBSCRIPTIONS_PER_ACCOUNT,
  newSubscriptionId,
  SubscriptionLimitError,
  type StoredSubscription,
} from './subscription-store.js';

export type NotificationErrorKind = 'invalid' | 'unauthorized' | 'conflict' | 'not_found' | 'unavailable';

export class NotificationError extends Error {
  constructor(readonly kind: NotificationErrorKind, message: string) {
    super(message);
    this.name = 'NotificationError';
  }
}

export const MAX_DEADLINE_AHEAD_S = 3600;

export interface SubscribeRequest {
  channel: string;
  target: string;
  types?: string[];
  deadline: number;
  signature: Hex;
}

export interface CreatedSubscription {
  id: string;
  channel: ChannelName;
  target: string;
  types: string[];
  createdAt: string;
  /** webhooks only, shown once */
  secret?: string;
  /** false: deliveries start once the target confirms (email: the code mailed to it) */
  confirmed: boolean;
}

export interface SubscriptionServiceOptions {
  db: Kysely<DB>;
  channels: ReadonlyMap<ChannelName, NotificationChannel>;
  /** ERC-1271 checks, one per served network */
  contractSignatures: ContractSignatureCheck[];
  /** unix seconds */
  now?: () => number;
}

export class SubscriptionService {
  private readonly now: () => number;

  constructor(private readonly options: SubscriptionServiceOptions) {
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  async subscribe(account: Address, body: SubscribeRequest): Promise<CreatedSubscription> {
    const channel = this.channel(body.channel);
    // authorisation first: nothing below (types, target rules, name resolution) runs for an unsigned request
    this.checkDeadline(body.deadline);
    await this.checkSignature(account, subscriptionRequestTypedData({ account, channel: body.channel, target: body.target, types: body.types, deadline: body.deadline }), body.signature);
    const types = body.types === undefined ? null : [...new Set(body.types)];
    if (types) {
      const unknown = types.find((t) => !(NOTIFICATION_TYPES as readonly string[]).includes(t));
      if (unknown !== undefined) throw new NotificationError('invalid', `types: unknown type '${unknown}' (one of ${NOTIFICATION_TYPES.join(', ')})`);
      if (types.length === 0) throw new NotificationError('invalid', 'types: at least one type (leave it out for all)');
    }
    const bad = await channel.validateTarget(body.target);
    if (bad !== null) throw new NotificationError('invalid', bad);
    const id = newSubscriptionId();
    const secret = channel.name === 'webhook' ? generateWebhookSecret() : null;
    const confirmationCode = channel.sendConfirmation ? randomBytes(12).toString('hex') : null;
    let createdAt: Date;
    try {
      createdAt = await insertSubscription(this.options.db, { id, account, channel: channel.name, target: body.target, types, secret, confirmationCode });
    } catch (err) {
      if (err instanceof DuplicateSubscriptionError) throw new NotificationError('conflict', `this account already has a ${channel.name} subscription to this target`);
      if (err instanceof SubscriptionLimitError) throw new NotificationError('conflict', `at most ${MAX_SUBSCRIPTIONS_PER_ACCOUNT} subscriptions per account: delete one first`);
      throw err;
    }
    if (confirmationCode !== null) {
      // the one confirmation message; if it cannot be sent the subscription goes (nothing could ever confirm it)
      const sent = await channel.sendConfirmation!(body.target, { id, account, code: confirmationCode });
      if (!sent.ok) {
        await deleteSubscription(this.options.db, account, id);
        throw new NotificationError('unavailable', `the confirmation message could not be sent (${sent.error}); try again later`);
      }
    }
    return { id, channel: channel.name, target: body.target, types: types ?? [...NOTIFICATION_TYPES], createdAt: createdAt.toISOString(), ...(secret ? { secret } : {}), confirmed: confirmationCode === null };
  }

  /** Confirms a subscription with the code sent to its target (no signature: having the code proves the target). */
  async confirm(account: Address, id: string, code: string): Promise<void> {
    const outcome = await confirmSubscription(this.options.db, account, id, code);
    if (outcome === 'missing') throw new NotificationError('not_found', `no subscription ${id} for this account`);
    if (outcome === 'wrong') throw new NotificationError('unauthorized', 'code: not the confirmation code sent to this subscription');
  }

  list(account: Address): Promise<StoredSubscription[]> {
    return listSubscriptions(this.options.db, account);
  }

  async unsubscribe(account: Address, id: string, body: { deadline: number; signature: Hex }): Promise<void> {
    this.checkDeadline(body.deadline);
    await this.checkSignature(account, unsubscribeTypedData({ account, id, deadline: body.deadline }), body.signature);
    if (!(await deleteSubscription(this.options.db, account, id))) throw new NotificationError('not_found', `no subscription ${id} for this account`);
  }

  private channel(name: string): NotificationChannel {
    const channel = this.options.channels.get(name as ChannelName);
    if (!channel) throw new NotificationError('invalid', `channel: expected one of ${['webhook', 'telegram', 'webpush', 'email'].join(', ')}, got '${name}'`);
    const missing = channel.missingConfiguration();
    if (missing !== null) throw new NotificationError('invalid', `channel ${name} is not configured on this server (${missing} is not set)`);
    return channel;
  }

  private checkDeadline(deadline: number): void {
    const now = this.now();
    if (!Number.isSafeInteger(deadline) || deadline <= now) throw new NotificationError('invalid', 'deadline: must be in the future (unix seconds)');
    if (deadline > now + MAX_DEADLINE_AHEAD_S) throw new NotificationError('invalid', `deadline: at most ${MAX_DEADLINE_AHEAD_S} s from now`);
  }

  private async checkSignature(account: Address, typedData: Parameters<typeof isSignedBy>[1], signature: Hex): Promise<void> {
    let valid: boolean;
    try {
      valid = await isSignedBy(account, typedData, signature, this.options.contractSignatures);
    } catch {
      throw new NotificationError('unavailable', 'the signature of a contract wallet could not be checked (the chain did not answer); try again');
    }
    if (!valid) throw new NotificationError('unauthorized', 'signature: not signed by the account (EOA or ERC-1271 wallet)');
  }
}
