import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { Logger } from 'pino';
import { AllExceptionsFilter } from 'src/common/filters/all-exceptions.filter';
import { AuthGuard } from 'src/modules/auth/auth.guard';
import { createValidationPipe } from 'src/common/pipes/validation.pipe';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { AppConfig } from 'src/config/app-config';
import { CoreModule } from 'src/core.module';
import { AccountAdminModule } from 'src/modules/account-admin/account-admin.module';
import { AccountSecurityModule } from 'src/modules/account-security/account-security.module';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { BalanceAlertsModule } from 'src/modules/balance-alerts/balance-alerts.module';
import { ApiKeysModule } from 'src/modules/api-keys/api-keys.module';
import { AuditModule } from 'src/modules/audit/audit.module';
import { AuthModule } from 'src/modules/auth/auth.module';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { ChatCompletionsModule } from 'src/modules/chat-completions/chat-completions.module';
import { EmbeddingsModule } from 'src/modules/embeddings/embeddings.module';
import { HealthModule } from 'src/modules/health/health.module';
import { ModelsModule } from 'src/modules/models/models.module';
import { PaymentsModule } from 'src/modules/payments/payments.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';
import { ReferralsModule } from 'src/modules/referrals/referrals.module';
import { MessagesModule } from 'src/modules/messages/messages.module';
import { ReportsModule } from 'src/modules/reports/reports.module';
import { ResponsesModule } from 'src/modules/responses/responses.module';
import { TextCompletionsModule } from 'src/modules/text-completions/text-completions.module';
import { UsageModule } from 'src/modules/usage/usage.module';

/** The HTTP API process: controllers, the global guard, pipe and filter. It produces jobs but never consumes them. */
@Module({})
export class ApiModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        CoreModule.forRoot(config, logger),
        HealthModule,
        AuditModule,
        AccountsModule,
        AuthModule,
        AccountSecurityModule,
        BalanceAlertsModule,
        ApiKeysModule,
        ChannelsModule,
        ModelsModule,
        ChatCompletionsModule,
        EmbeddingsModule,
        ResponsesModule,
        MessagesModule,
        TextCompletionsModule,
        RateLimitsModule,
        UsageModule,
        ReferralsModule,
        PaymentsModule,
        AccountAdminModule,
        ReportsModule,
      ],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
