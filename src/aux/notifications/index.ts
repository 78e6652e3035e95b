/**
 * Notifications (issue 11) put together for the composition root: the delivery channels from the configuration,
 * the subscription service (signatures checked on every served network), the routes' context, the outbox
 * dispatcher (every replica runs one; SKIP LOCKED shares the work) and the per-chain producer settings the
 * background loops use (the producer runs with the chain's other loops, on the leading replica).
 *
 * @example
 *   const notifications = await buildNotifications({ config, networks, db, logger });
 *   registerNotificationRoutes(server, notifications.routes);
 *   void notifications.dispatcher.run(signal);
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Address, Hex } from 'viem';
import type { Config } from '../../config/config.js';
import type { ChainNetwork } from '../../chain/network.js';
import type { DB } from '../../db/schema.js';
import type { ChannelName, NotificationChannel } from '../../notify/channels/channel.js';
import { resolveAllowPrivateTargets } from '../../notify/channels/target-address.js';
import { TelegramChannel } from '../../notify/channels/telegram-channel.js';
import { WebhookChannel } from '../../notify/channels/webhook-channel.js';
import { loadVapidKeys, WebPushChannel } from '../../notify/channels/webpush-channel.js';
import { OutboxDispatcher } from '../../notify/outbox/outbox-dispatcher.js';
import type { NotificationRoutesContext } from './routes.js';
import { SubscriptionService } from './subscription-service.js';
import type { ContractSignatureCheck } from './subscription-signatures.js';

export { registerNotificationRoutes } from './routes.js';
export { producerFor, type ProducerSettings } from './chain-producer.js';

export interface NotificationsBuild {
  channels: Map<ChannelName, NotificationChannel>;
  subscriptions: SubscriptionService;
  routes: NotificationRoutesContext;
  dispatcher: OutboxDispatcher;
}

/** ERC-1271 through a network's reader: null when the account has no code there. */
function contractCheck(network: ChainNetwork): ContractSignatureCheck {
  return async (account: Address, digest: Hex, signature: Hex) => ((await network.reader.hasCode(account)) ? network.reader.isValidSignature1271(account, digest, signature) : null);
}

export async function buildNotifications(deps: { config: Config; networks: ChainNetwork[]; db: Kysely<DB>; logger: Logger; now?: () => number }): Promise<NotificationsBuild> {
  const { config, networks, db } = deps;
  const c = config.notifyChannels;
  const allowPrivateTargets = resolveAllowPrivateTargets(c.allowPrivateTargets, networks.length > 0 && networks.every((n) => n.devnet !== null));
  const webpush = new WebPushChannel({ vapid: await loadVapidKeys(c.vapid, config.dataDir), allowPrivateTargets });
  const channels = new Map<ChannelName, NotificationChannel>([
    ['webhook', new WebhookChannel({ allowPrivateTargets })],
    ['telegram', new TelegramChannel({ botToken: c.telegram.botToken, apiUrl: c.telegram.apiUrl })],
    ['webpush', webpush],
  ]);
  const subscriptions = new SubscriptionService({ db, channels, contractSignatures: networks.map(contractCheck), now: deps.now });
  const n = config.notifications;
  const dispatcher = new OutboxDispatcher({
    db,
    channels,
    policy: { baseMs: n.backoffBaseMs, capMs: n.backoffCapMs, maxAgeMs: n.maxAgeMs },
    leaseMs: n.leaseMs,
    pollIntervalMs: n.pollIntervalMs,
    concurrency: n.concurrency,
    logger: deps.logger.child({ module: 'notifications' }),
  });
  return { channels, subscriptions, dispatcher, routes: { db, subscriptions, enabled: config.cms.enabled, vapidPublicKey: () => webpush.vapidPublicKey() } };
}
