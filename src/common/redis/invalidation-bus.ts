import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Logger } from 'pino';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { redisDbOf } from 'src/config/redis-config';
import { LOGGER } from 'src/common/logging/logger';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { logRedisErrors } from 'src/common/redis/redis-error-log';
import { REDIS } from 'src/common/redis/redis.tokens';

export enum InvalidationTopic {
  ApiKey = 'api-key',
  Catalog = 'catalog',
  RateLimits = 'rate-limits',
  ChannelHealth = 'channel-health',
}

type Listener = (id: string | null) => void;

/** The message that means "drop everything of this topic"; no id of any topic is `*`. */
const ALL = '*';

/**
 * Cross-process cache invalidation over Redis pub/sub. Listeners get the id that changed, or null
 * meaning "drop everything": sent after the subscriber reconnects, since messages may have been missed.
 */
@Injectable()
export class InvalidationBus implements OnModuleDestroy {
  private subscriber: RedisClient | null = null;
  private readonly listeners = new Map<InvalidationTopic, Listener[]>();
  /**
   * Pub/sub channels ignore the db index; naming them by it keeps deployments sharing a Redis apart.
   * On a cluster (db 0 only) a PUBLISH reaches the subscribers of every node, so one subscriber
   * connection, to any node, hears every process's messages.
   */
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.prefix = `gateway:${redisDbOf(config.redis)}:invalidate:`;
  }

  on(topic: InvalidationTopic, listener: Listener): void {
    this.listeners.set(topic, [...(this.listeners.get(topic) ?? []), listener]);
    this.ensureSubscribed();
  }

  async publish(topic: InvalidationTopic, id: string): Promise<void> {
    await this.redis.publish(this.prefix + topic, id);
  }

  /** Every process drops all it caches of `topic`: for a change that touches too many ids to name them. */
  async publishAll(topic: InvalidationTopic): Promise<void> {
    await this.redis.publish(this.prefix + topic, ALL);
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscriber?.quit().catch(() => undefined);
  }

  private ensureSubscribed(): void {
    if (this.subscriber) {
      return;
    }
    const subscriber = createRedis(this.config.redis, { lazyConnect: false, maxRetriesPerRequest: null });
    let connectedBefore = false;
    subscriber.on('ready', () => {
      if (connectedBefore) {
        this.logger.warn('invalidation subscriber reconnected; dropping local caches');
        this.listeners.forEach((listeners) => listeners.forEach((listener) => listener(null)));
      }
      connectedBefore = true;
    });
    logRedisErrors(subscriber, this.logger, 'invalidation subscriber');
    subscriber.on('message', (channel: string, id: string) => {
      const topic = channel.slice(this.prefix.length) as InvalidationTopic;
      this.listeners.get(topic)?.forEach((listener) => listener(id === ALL ? null : id));
    });
    // ioredis re-subscribes by itself after a reconnect.
    const channels = Object.values(InvalidationTopic).map((topic) => this.prefix + topic);
    subscriber.subscribe(...channels).catch((error: Error) => this.logger.error({ err: error.message }, 'subscribe'));
    this.subscriber = subscriber;
  }
}
