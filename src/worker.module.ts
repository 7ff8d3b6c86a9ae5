import { DynamicModule, Global, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { stopTracing } from 'src/common/telemetry/tracing';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { AppConfig } from 'src/config/app-config';
import { CoreModule } from 'src/core.module';
import { BillingWorkerModule } from 'src/modules/billing/billing-worker.module';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { WorkerGauges } from 'src/modules/health/worker-gauges';
import { WorkerMetricsServer } from 'src/modules/health/worker-metrics.server';
import { PartitionsModule } from 'src/modules/partitions/partitions.module';
import { MailWorkerModule } from 'src/modules/mail/mail-worker.module';
import { PaymentsWorkerModule } from 'src/modules/payments/payments-worker.module';
import { StoredResponsesWorkerModule } from 'src/modules/responses/stored/stored-responses-worker.module';
import { DataSource } from 'typeorm';

/**
 * Sends the worker's last spans once everything else has stopped. Nest runs the shutdown hooks of the
 * root module first and of global modules last, the global module imported first last of all: so this
 * one, global and the first import, runs after BullMQ's workers (a global module's) finished their jobs.
 */
@Global()
@Module({})
class TracingFlushModule implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing().catch(() => undefined);
  }
}

/** The worker process: no public HTTP (metrics only, when configured). Queue processors are registered here and only here. */
@Module({})
export class WorkerModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        TracingFlushModule,
        CoreModule.forRoot(config, logger),
        BillingWorkerModule,
        PaymentsWorkerModule,
        MailWorkerModule,
        PartitionsModule,
        StoredResponsesWorkerModule,
      ],
      providers: [WorkerMetricsServer, WorkerGauges, DependencyProbe],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all([this.redis.ping(), this.dataSource.query('SELECT 1')]);
    this.logger.info('worker ready: postgres and redis reachable');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
