/**
 * The four delivery channels built from the configuration, for the composition root: one call, a map by
 * channel name. Private targets follow NOTIFY_ALLOW_PRIVATE_TARGETS, defaulting to allowed on a node that serves
 * only the embedded devnet; the VAPID keys come from the configuration or DATA_DIR (generated once).
 *
 * @example
 *   const channels = await buildNotificationChannels(config.notifyChannels, { dataDir: config.dataDir, devnetOnly: config.devnet.enabled && config.rpcUrls.size === 0, timeoutMs: config.outboundTimeoutMs });
 *   channels.get('telegram')!.missingConfiguration(); // 'TELEGRAM_BOT_TOKEN' when unset
 *   (channels.get('webpush') as WebPushChannel).vapidPublicKey();
 */
import type { NotifyChannelsConfig } from '../../config/config.js';
import type { ChannelName, NotificationChannel } from './channel.js';
import { EmailChannel } from './email-channel.js';
import { resolveAllowPrivateTargets } from './target-address.js';
import { TelegramChannel } from './telegram-channel.js';
import { WebhookChannel } from './webhook-channel.js';
import { loadVapidKeys, WebPushChannel } from './webpush-channel.js';

export interface NotificationChannels extends ReadonlyMap<ChannelName, NotificationChannel> {
  get(name: 'webpush'): WebPushChannel;
  get(name: ChannelName): NotificationChannel;
}

export async function buildNotificationChannels(
  config: NotifyChannelsConfig,
  context: { dataDir: string; devnetOnly: boolean; /** Telegram, web push and email; webhooks always 10 s */ timeoutMs?: number },
): Promise<NotificationChannels> {
  const allowPrivateTargets = resolveAllowPrivateTargets(config.allowPrivateTargets, context.devnetOnly);
  const vapid = await loadVapidKeys(config.vapid, context.dataDir);
  const timeoutMs = context.timeoutMs ?? 10_000;
  const channels: NotificationChannel[] = [
    new WebhookChannel({ allowPrivateTargets }),
    new TelegramChannel({ botToken: config.telegram.botToken, apiUrl: config.telegram.apiUrl, timeoutMs }),
    new WebPushChannel({ vapid, allowPrivateTargets, timeoutMs }),
    new EmailChannel({ smtpUrl: config.smtp.url, from: config.smtp.from, timeoutMs }),
  ];
  return new Map(channels.map((c) => [c.name, c])) as unknown as NotificationChannels;
}
