/**
 * `PubSub` on Redis: publishes on a command connection, receives on a dedicated subscriber connection. After a
 * reconnect this class re-subscribes itself (not ioredis), so it knows exactly when a subscription is live
 * again and tells the subscriber (`onResubscribed`) that messages may have been missed.
 *
 * @example
 *   const pubsub = new RedisPubSub({ publisher, subscriber, namespace: 'batchbook:' });
 */
import type { Redis } from 'ioredis';
import type { MessageHandler, PubSub, SubscribeOptions, Subscription } from './pubsub.js';
import { closeRedisConnection } from './redis-connection.js';

interface Entry {
  handler: MessageHandler;
  options: SubscribeOptions;
  /** true after an interruption, until the subscription is live again */
  missed: boolean;
}

export interface RedisPubSubOptions {
  publisher: Redis;
  /** dedicated to this PubSub (a connection in subscriber mode cannot run other commands) */
  subscriber: Redis;
  namespace: string;
  /** close both connections on close() (default true for the subscriber, false for the publisher) */
  ownsPublisher?: boolean;
}

export class RedisPubSub implements PubSub {
  readonly kind = 'redis' as const;
  private readonly channels = new Map<string, Set<Entry>>();
  /** channels (full names) the subscriber connection is currently subscribed to */
  private readonly subscribed = new Set<string>();
  private closed = false;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly namespace: string;

  constructor(private readonly options: RedisPubSubOptions) {
    this.publisher = options.publisher;
    this.subscriber = options.subscriber;
    this.namespace = options.namespace;
    this.subscriber.on('message', (channel: string, message: string) => {
      const entries = this.channels.get(channel);
      if (!entries) return;
      for (const entry of [...entries]) {
        try {
          entry.handler(message);
        } catch {
          // one subscriber's failure is its own
        }
      }
    });
    this.subscriber.on('close', () => this.interrupted());
    this.subscriber.on('ready', () => void this.resubscribeAll());
  }

  private interrupted(): void {
    this.subscribed.clear();
    for (const entries of this.channels.values()) {
      for (const entry of entries) {
        if (entry.missed) continue;
        entry.missed = true;
        try {
          entry.options.onInterrupted?.();
        } catch {
          // ignore
        }
      }
    }
  }

  private async resubscribeAll(): Promise<void> {
    if (this.closed) return;
    const names = [...this.channels.keys()];
    if (names.length === 0) return;
    try {
      await this.subscriber.subscribe(...names);
    } catch {
      return; // the next 'ready' tries again
    }
    for (const name of names) this.markLive(name);
  }

  private markLive(name: string): void {
    this.subscribed.add(name);
    for (const entry of this.channels.get(name) ?? []) {
      if (!entry.missed) continue;
      entry.missed = false;
      try {
        entry.options.onResubscribed?.();
      } catch {
        // ignore
      }
    }
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.publisher.publish(this.namespace + channel, message);
  }

  async subscribe(channel: string, handler: MessageHandler, options: SubscribeOptions = {}): Promise<Subscription> {
    if (this.closed) throw new Error('pubsub closed');
    const name = this.namespace + channel;
    let entries = this.channels.get(name);
    if (!entries) this.channels.set(name, (entries = new Set()));
    const entry: Entry = { handler, options, missed: false };
    entries.add(entry);
    if (!this.subscribed.has(name)) {
      entry.missed = true;
      if (this.subscriber.status === 'ready') {
        try {
          await this.subscriber.subscribe(name);
          this.subscribed.add(name);
          entry.missed = false;
          this.markLive(name);
        } catch {
          // live after the next reconnect
        }
      }
    }
    const self = this;
    return {
      get live() {
        return !entry.missed && self.subscribed.has(name) && self.subscriber.status === 'ready';
      },
      async unsubscribe() {
        const set = self.channels.get(name);
        if (!set?.delete(entry)) return;
        if (set.size > 0) return;
        self.channels.delete(name);
        self.subscribed.delete(name);
        if (self.subscriber.status === 'ready') await self.subscriber.unsubscribe(name).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.channels.clear();
    this.subscribed.clear();
    await closeRedisConnection(this.subscriber);
    if (this.options.ownsPublisher) await closeRedisConnection(this.publisher);
  }
}
