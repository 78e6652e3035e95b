/**
 * Notifications (issue 11) put together for the composition root: the four delivery channels from the configuration
 * (webhook, Telegram, web push, email),
 * the subscription service (signatures checked on every served network), the routes' context, the outbox
 * dispatcher (every replica runs one; SKIP LOCKED shares the work; with AMQP_URL a relay into the durable RabbitMQ
 * queue and the workers consuming it) and the per-chain producer settings the
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
import { buildNotificationChannels, type NotificationChannels } from '../../notify/channels/notification-channels.js';
import { OutboxDispatcher } from '../../notify/outbox/outbox-dispatcher.js';
import { AmqpDelivery } from '../../notify/queue/amqp-delivery.js';
import { AmqpQueue } from '../../notify/queue/amqp-queue.js';
import type { NotificationRoutesContext } from './routes.js';
import { SubscriptionService } from './subscription-service.js';
import type { ContractSignatureCheck } from './subscription-signatures.js';

export { registerNotificationRoutes } from './routes.js';
export { producerFor, type ProducerSettings } from './chain-producer.js';

export interface NotificationsBuild {
  channels: NotificationChannels;
  subscriptions: SubscriptionService;
  routes: NotificationRoutesContext;
  /** the outbox dispatcher, or with AMQP_URL the relay into RabbitMQ and its delivery workers */
  dispatcher: { run(signal: AbortSignal): Promise<void>; wake(): void };
}

/** ERC-1271 through a network's reader: null when the account has no code there. */
function contractCheck(network: ChainNetwork): ContractSignatureCheck {
  return async (account: Address, digest: Hex, signature: Hex) => ((await network.reader.hasCode(account)) ? network.reader.isValidSignature1271(account, digest, signature) : null);
}

export async function buildNotifications(deps: { config: Config; networks: ChainNetwork[]; db: Kysely<DB>; logger: Logger; now?: () => number }): Promise<NotificationsBuild> {
  const { config, networks, db } = deps;
  const c = config.notifyChannels;
  const n = config.notifications;
  const devnetOnly = networks.length > 0 && networks.every((n) => n.devnet !== null);
  const channels = await buildNotificationChannels(c, { dataDir: config.dataDir, devnetOnly, timeoutMs: config.outboundTimeoutMs });
  const webpush = channels.get('webpush');
  const subscriptions = new SubscriptionService({ db, channels, contractSignatures: networks.map(contractCheck), now: deps.now });
  const policy = { baseMs: n.backoffBaseMs, capMs: n.backoffCapMs, maxAgeMs: n.maxAgeMs };
  const logger = deps.logger.child({ module: 'notifications' });
  const dispatcher = config.amqpUrl
    ? new AmqpDelivery({
        db,
        queue: await AmqpQueue.open({ url: config.amqpUrl, queue: c.amqpQueue, prefetch: n.concurrency, publishTimeoutMs: config.outboundTimeoutMs, connectionName: 'batchbook-notifications', logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) } }),
        attempt: { db, channels, policy },
        leaseMs: n.leaseMs,
        pollIntervalMs: n.pollIntervalMs,
        batch: n.concurrency,
        logger,
      })
    : new OutboxDispatcher({ db, channels, policy, leaseMs: n.leaseMs, pollIntervalMs: n.pollIntervalMs, concurrency: n.concurrency, logger });
  return { channels, subscriptions, dispatcher, routes: { db, subscriptions, enabled: config.cms.enabled, vapidPublicKey: () => webpush.vapidPublicKey() } };
}
