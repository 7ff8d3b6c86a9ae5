import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ConnectionOptions } from 'bullmq';
import { Logger } from 'pino';
import { SecretBox } from 'src/common/crypto/secret-box';
import { LOGGER } from 'src/common/logging/logger';
import { logQueueErrorsTo } from 'src/common/queue/bull-queues';
import { QUEUE_CONNECTION, QUEUE_PREFIX, queueConnectionOf } from 'src/common/queue/queue-connection';
import { EvictionPolicyCheck } from 'src/common/redis/eviction-policy';
import { InvalidationBus } from 'src/common/redis/invalidation-bus';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { logRedisErrors } from 'src/common/redis/redis-error-log';
import { REDIS } from 'src/common/redis/redis.tokens';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';

/** What both processes share: configuration, logging, Postgres, Redis, queues and cross-process invalidation. */
@Global()
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(@Inject(QUEUE_CONNECTION) private readonly queueConnection: ConnectionOptions) {}

  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    logQueueErrorsTo(logger);
    const queueConnection = queueConnectionOf(config.redis);
    return {
      module: CoreModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(config)),
        BullModule.forRoot({ connection: queueConnection, prefix: QUEUE_PREFIX }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: QUEUE_CONNECTION, useValue: queueConnection },
        {
          provide: REDIS,
          useFactory: () => {
            const redis: RedisClient = createRedis(config.redis, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
            logRedisErrors(redis, logger, 'commands');
            return redis;
          },
        },
        { provide: SecretBox, useFactory: () => new SecretBox(config.secretsKey) },
        InvalidationBus,
        EvictionPolicyCheck,
      ],
      exports: [APP_CONFIG, LOGGER, REDIS, QUEUE_CONNECTION, SecretBox, InvalidationBus],
    };
  }

  /** A cluster client that the queues shared: BullMQ closes only the connections it made itself. */
  async onApplicationShutdown(): Promise<void> {
    const client = this.queueConnection as Partial<RedisClient>;
    if (typeof client.quit === 'function') {
      await client.quit().catch(() => undefined);
    }
  }
}
