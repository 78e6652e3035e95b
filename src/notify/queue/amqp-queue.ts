/**
 * A durable RabbitMQ work queue for notification deliveries (amqplib): the connection recovers by itself
 * (exponential backoff with jitter) and re-declares the topology and restarts consumers after every reconnect.
 *
 * Topology, declared idempotently on every connect:
 *   - `<queue>`        durable, dead-lettering through the exchange below;
 *   - `<queue>.dlx`    durable direct exchange;
 *   - `<queue>.dead`   durable queue bound to it: messages a consumer gave up on, kept for inspection.
 * Publishing uses a confirm channel and `persistent: true` and resolves only after the broker confirmed the
 * message (so it is on disk for a durable queue); a publish that the broker does not confirm rejects and the
 * caller keeps the message (the outbox row stays unsent). Consumers ack manually: a handler decides `ack`,
 * `requeue` or `dead-letter`; a handler that throws gets its message requeued once and dead-lettered when it
 * throws again on the redelivery. `prefetch` bounds the unacknowledged messages per consumer.
 *
 * @example
 *   const queue = await AmqpQueue.open({ url: config.amqpUrl, queue: config.notifyChannels.amqpQueue });
 *   await queue.publish(JSON.stringify({ deliveryId }), { messageId: deliveryId });
 *   queue.consume(async (m) => ((await deliver(JSON.parse(m.body.toString()))) ? 'ack' : 'requeue'));
 *   await queue.close();
 */
import { connect, type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type RecoveringChannelModel } from 'amqplib';

export interface AmqpQueueLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface AmqpQueueOptions {
  /** amqp(s)://user:pass@host:port/vhost */
  url: string;
  /** the work queue; `<queue>.dlx` and `<queue>.dead` are derived from it */
  queue: string;
  /** unacknowledged messages per consumer; default 16 */
  prefetch?: number;
  /** how long publish waits for a connection and for the broker's confirm; default 10 s */
  publishTimeoutMs?: number;
  /** reconnect backoff bounds; default 200 ms .. 5 s */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  /** failed attempts at the very first connection before open() rejects; default 5 (later: retry forever) */
  initialRetries?: number;
  /** shown by the broker (management UI, rabbitmqctl list_connections) */
  connectionName?: string;
  logger?: AmqpQueueLogger;
}

export type ConsumeDecision = 'ack' | 'requeue' | 'dead-letter';

export interface QueuedMessage {
  body: Buffer;
  messageId: string | undefined;
  headers: Record<string, unknown>;
  /** the broker delivered it before without an ack (a consumer died or requeued it) */
  redelivered: boolean;
}

export type MessageHandler = (message: QueuedMessage) => Promise<ConsumeDecision>;

export class QueueError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'QueueError';
  }
}

interface Consumer {
  handler: MessageHandler;
  channel: Channel | null;
  consumerTag: string | null;
  /** a (re)start is under way: the reconnect setup and a channel-level restart must not both open one */
  starting: boolean;
  inFlight: Set<Promise<void>>;
}

/** The user-free form of an AMQP URL, for logs (the URL carries the password). */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'the broker';
  }
}

export class AmqpQueue {
  readonly deadLetterExchange: string;
  readonly deadLetterQueue: string;
  private publishChannel: Promise<ConfirmChannel> | null = null;
  private readonly consumers: Consumer[] = [];
  private closing = false;

  private constructor(
    private readonly options: AmqpQueueOptions,
    private readonly connection: RecoveringChannelModel,
  ) {
    this.deadLetterExchange = `${options.queue}.dlx`;
    this.deadLetterQueue = `${options.queue}.dead`;
  }

  get queue(): string {
    return this.options.queue;
  }

  /** Connects (retrying the first connection a few times), declares the topology, and keeps reconnecting after. */
  static async open(options: AmqpQueueOptions): Promise<AmqpQueue> {
    let queue: AmqpQueue | null = null;
    const where = describeUrl(options.url);
    const connection = await connect(options.url, {
      timeout: options.publishTimeoutMs ?? 10_000,
      clientProperties: { connection_name: options.connectionName ?? 'batchbook' },
      recovery: {
        initialDelay: options.reconnect?.initialDelayMs ?? 200,
        maxDelay: options.reconnect?.maxDelayMs ?? 5_000,
        maxRetries: Infinity,
        initialMaxRetries: options.initialRetries ?? 5,
        waitForConnect: false,
        setup: async (model: ChannelModel) => {
          if (queue) await queue.onConnected(model);
          else await AmqpQueue.declare(model, options.queue);
        },
      },
    });
    queue = new AmqpQueue(options, connection);
    connection.on('error', (err: Error) => options.logger?.warn(`amqp: ${where}: ${err.message}`));
    connection.on('disconnect', (err: Error) => {
      options.logger?.warn(`amqp: disconnected from ${where} (${err.message}); reconnecting`);
      queue!.onDisconnected();
    });
    connection.on('connect', () => options.logger?.info(`amqp: connected to ${where}, queue ${options.queue}`));
    try {
      await connection.waitForConnect();
    } catch (error) {
      await connection.close().catch(() => {});
      throw new QueueError(`amqp: cannot connect to ${where} (${(error as Error).message})`, { cause: error });
    }
    return queue;
  }

  private static async declare(model: ChannelModel, queue: string): Promise<void> {
    const channel = await model.createChannel();
    try {
      await channel.assertExchange(`${queue}.dlx`, 'direct', { durable: true });
      await channel.assertQueue(`${queue}.dead`, { durable: true });
      await channel.bindQueue(`${queue}.dead`, `${queue}.dlx`, queue);
      await channel.assertQueue(queue, { durable: true, arguments: { 'x-dead-letter-exchange': `${queue}.dlx`, 'x-dead-letter-routing-key': queue } });
    } finally {
      await channel.close().catch(() => {});
    }
  }

  private async onConnected(model: ChannelModel): Promise<void> {
    await AmqpQueue.declare(model, this.options.queue);
    for (const consumer of this.consumers) if (consumer.channel === null) await this.startConsumer(consumer, model);
  }

  private onDisconnected(): void {
    this.publishChannel = null;
    for (const consumer of this.consumers) {
      consumer.channel = null;
      consumer.consumerTag = null;
    }
  }

  private confirmChannel(): Promise<ConfirmChannel> {
    if (this.publishChannel === null) {
      const opening = this.connection.createConfirmChannel().then((channel) => {
        channel.on('error', () => {});
        channel.on('close', () => {
          if (this.publishChannel === opening) this.publishChannel = null;
        });
        return channel;
      });
      opening.catch(() => {
        if (this.publishChannel === opening) this.publishChannel = null;
      });
      this.publishChannel = opening;
    }
    return this.publishChannel;
  }

  /**
   * Publishes one persistent message to the queue and resolves once the broker confirmed it. Rejects with
   * QueueError when no connection comes within the timeout, the broker nacks, or the channel closes first.
   */
  async publish(body: Buffer | string, properties: { messageId: string; headers?: Record<string, unknown> }): Promise<void> {
    if (this.closing) throw new QueueError('amqp: the queue is closed');
    const timeoutMs = this.options.publishTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new QueueError(`amqp: publish not confirmed within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const channel = await Promise.race([this.confirmChannel(), timeout]);
      await Promise.race([this.sendConfirmed(channel, typeof body === 'string' ? Buffer.from(body) : body, properties), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private sendConfirmed(channel: ConfirmChannel, content: Buffer, properties: { messageId: string; headers?: Record<string, unknown> }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onClose = () => reject(new QueueError('amqp: the channel closed before the broker confirmed the message'));
      channel.once('close', onClose);
      try {
        channel.sendToQueue(this.options.queue, content, { persistent: true, messageId: properties.messageId, headers: properties.headers, contentType: 'application/json' }, (err) => {
          channel.removeListener('close', onClose);
          if (err) reject(new QueueError('amqp: the broker refused the message (nack)', { cause: err }));
          else resolve();
        });
      } catch (error) {
        channel.removeListener('close', onClose);
        reject(new QueueError(`amqp: publish failed (${(error as Error).message})`, { cause: error }));
      }
    });
  }

  /** Registers a consumer; it runs now if connected and again after every reconnect. */
  async consume(handler: MessageHandler): Promise<void> {
    if (this.closing) throw new QueueError('amqp: the queue is closed');
    const consumer: Consumer = { handler, channel: null, consumerTag: null, starting: false, inFlight: new Set() };
    this.consumers.push(consumer);
    await this.startConsumer(consumer, this.connection);
  }

  private async startConsumer(consumer: Consumer, model: Pick<ChannelModel, 'createChannel'>): Promise<void> {
    if (consumer.starting || consumer.channel !== null || this.closing) return;
    consumer.starting = true;
    try {
      const channel = await model.createChannel();
      channel.on('error', (err: Error) => this.options.logger?.warn(`amqp: consumer channel: ${err.message}`));
      channel.on('close', () => this.onConsumerChannelClosed(consumer, channel));
      await channel.prefetch(this.options.prefetch ?? 16);
      const { consumerTag } = await channel.consume(this.options.queue, (message) => {
        if (message === null) return; // the broker cancelled the consumer (queue deleted)
        const work = this.handle(channel, consumer.handler, message);
        consumer.inFlight.add(work);
        void work.finally(() => consumer.inFlight.delete(work));
      }, { noAck: false });
      consumer.channel = channel;
      consumer.consumerTag = consumerTag;
    } finally {
      consumer.starting = false;
    }
  }

  /** A consumer channel that closed on its own (not with the connection) is reopened after a second. */
  private onConsumerChannelClosed(consumer: Consumer, channel: Channel): void {
    if (consumer.channel !== channel) return;
    consumer.channel = null;
    consumer.consumerTag = null;
    if (this.closing) return;
    setTimeout(() => {
      this.startConsumer(consumer, this.connection).catch((err: Error) => this.options.logger?.warn(`amqp: restarting a consumer: ${err.message}`));
    }, 1_000).unref();
  }

  private async handle(channel: Channel, handler: MessageHandler, message: ConsumeMessage): Promise<void> {
    let decision: ConsumeDecision;
    try {
      decision = await handler({
        body: message.content,
        messageId: message.properties.messageId as string | undefined,
        headers: (message.properties.headers ?? {}) as Record<string, unknown>,
        redelivered: message.fields.redelivered,
      });
    } catch (error) {
      decision = message.fields.redelivered ? 'dead-letter' : 'requeue';
      this.options.logger?.warn(`amqp: handler failed (${(error as Error).message}); message ${decision === 'requeue' ? 'requeued' : 'dead-lettered'}`);
    }
    try {
      if (decision === 'ack') channel.ack(message);
      else channel.nack(message, false, decision === 'requeue');
    } catch {
      // the channel closed meanwhile: the broker redelivers the unacknowledged message to the next consumer
    }
  }

  /** Messages waiting in the work queue and in the dead-letter queue. */
  async depth(): Promise<{ ready: number; dead: number }> {
    const channel = await this.connection.createChannel();
    try {
      const main = await channel.checkQueue(this.options.queue);
      const dead = await channel.checkQueue(this.deadLetterQueue);
      return { ready: main.messageCount, dead: dead.messageCount };
    } finally {
      await channel.close().catch(() => {});
    }
  }

  /** Stops consuming, lets running handlers finish (their acks still go out), then closes the connection. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const consumer of this.consumers) {
      const channel = consumer.channel;
      if (channel === null) continue;
      if (consumer.consumerTag !== null) await channel.cancel(consumer.consumerTag).catch(() => {});
      await Promise.allSettled([...consumer.inFlight]);
      await channel.close().catch(() => {});
    }
    if (this.publishChannel) await this.publishChannel.then((c) => c.close()).catch(() => {});
    await this.connection.close().catch(() => {});
  }
}
