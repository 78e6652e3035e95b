/**
 * Publish/subscribe across replicas: `MemoryPubSub` (one process) and `RedisPubSub` (redis-pubsub.ts).
 * Delivery is at most once: a subscription reports when it is interrupted (messages published meanwhile are
 * lost) and when it is live again, so a subscriber can resynchronise rather than trust a gap-free stream.
 * Channels are relative: each backend prefixes them with its namespace.
 *
 * @example
 *   const sub = await pubsub.subscribe('balances:31337', (m) => apply(JSON.parse(m)), { onResubscribed: resync });
 *   await pubsub.publish('balances:31337', JSON.stringify(changes));
 *   await sub.unsubscribe();
 */

export type MessageHandler = (message: string) => void;

export interface SubscribeOptions {
  /** the subscription is down: messages published from now on are lost until `onResubscribed` */
  onInterrupted?: () => void;
  /** the subscription is live again after an interruption (not called for the first subscription) */
  onResubscribed?: () => void;
}

export interface Subscription {
  /** true while messages are being received */
  readonly live: boolean;
  unsubscribe(): Promise<void>;
}

export interface PubSub {
  readonly kind: 'memory' | 'redis';
  /** Rejects when the message could not be handed to the broker (Redis unreachable). */
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is registered (it may not be live yet if Redis is unreachable). */
  subscribe(channel: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}

/** In-process pub/sub. Messages are delivered asynchronously (as over a network), never to a closed subscription. */
export class MemoryPubSub implements PubSub {
  readonly kind = 'memory' as const;
  private readonly channels = new Map<string, Set<MessageHandler>>();

  async publish(channel: string, message: string): Promise<void> {
    const handlers = this.channels.get(channel);
    if (!handlers || handlers.size === 0) return;
    const targets = [...handlers];
    queueMicrotask(() => {
      for (const handler of targets) {
        if (!handlers.has(handler)) continue;
        try {
          handler(message);
        } catch {
          // one subscriber's failure is its own
        }
      }
    });
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<Subscription> {
    let handlers = this.channels.get(channel);
    if (!handlers) this.channels.set(channel, (handlers = new Set()));
    // the same function may subscribe twice: each subscription is distinct
    const entry: MessageHandler = (m) => handler(m);
    handlers.add(entry);
    let live = true;
    return {
      get live() {
        return live;
      },
      unsubscribe: async () => {
        live = false;
        handlers.delete(entry);
        if (handlers.size === 0) this.channels.delete(channel);
      },
    };
  }

  async close(): Promise<void> {
    this.channels.clear();
  }
}
