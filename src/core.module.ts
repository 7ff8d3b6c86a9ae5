import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import Redis from 'ioredis';
import { Logger } from 'pino';
import { SecretBox } from 'src/common/crypto/secret-box';
import { LOGGER } from 'src/common/logging/logger';
import { logQueueErrorsTo } from 'src/common/queue/bull-queues';
import { InvalidationBus } from 'src/common/redis/invalidation-bus';
import { logRedisErrors } from 'src/common/redis/redis-error-log';
import { REDIS } from 'src/common/redis/redis.tokens';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';

/** What both processes share: configuration, logging, Postgres, Redis, queues and cross-process invalidation. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    logQueueErrorsTo(logger);
    return {
      module: CoreModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(config)),
        BullModule.forRoot({ connection: { url: config.redisUrl }, prefix: 'gateway' }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        {
          provide: REDIS,
          useFactory: () => {
            const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
            logRedisErrors(redis, logger, 'commands');
            return redis;
          },
        },
        { provide: SecretBox, useFactory: () => new SecretBox(config.secretsKey) },
        InvalidationBus,
      ],
      exports: [APP_CONFIG, LOGGER, REDIS, SecretBox, InvalidationBus],
    };
  }
}
