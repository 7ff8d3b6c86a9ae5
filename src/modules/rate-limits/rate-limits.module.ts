import { ExecutionContext, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { CatalogService } from 'src/modules/models/catalog.service';
import { ModelsModule } from 'src/modules/models/models.module';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';
import { AdminRateLimitsController } from 'src/modules/rate-limits/admin-rate-limits.controller';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter';
import {
  GatewayThrottlerGuard,
  LimitedRequest,
  REQUESTS_THROTTLER,
} from 'src/modules/rate-limits/gateway-throttler.guard';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { EffectiveLimits, RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RateLimitsRepository } from 'src/modules/rate-limits/rate-limits.repository';
import { RateLimitsService } from 'src/modules/rate-limits/rate-limits.service';
import { RedisThrottlerStorage } from 'src/modules/rate-limits/redis-throttler.storage';
import { RequestRateLimiter } from 'src/modules/rate-limits/request-rate-limiter';
import { TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter';

/** The limits of this request's account on its model, computed once per request; null for an unknown model. */
function limitsOf(context: ExecutionContext, catalog: CatalogService, policy: RateLimitPolicy): EffectiveLimits | null {
  const request = context.switchToHttp().getRequest<LimitedRequest>();
  if (request.limits === undefined) {
    const modelId = (request.body as { model?: unknown } | undefined)?.model;
    const model = typeof modelId === 'string' ? catalog.get(modelId) : undefined;
    const accountId = (request.principal as ApiKeyPrincipal).accountId;
    request.limits = model ? policy.limitsFor(accountId, model) : null;
  }
  return request.limits;
}

/** The limiter's state and checks, without the throttler wiring (which needs them to build its options). */
@Module({
  imports: [TypeOrmModule.forFeature([AccountRateLimitEntity])],
  providers: [
    RateLimitsRepository,
    RateLimitPolicy,
    RedisThrottlerStorage,
    LimiterFailurePolicy,
    RequestRateLimiter,
    TokenRateLimiter,
    ConcurrencyLimiter,
  ],
  exports: [
    RequestRateLimiter,
    RateLimitsRepository,
    RateLimitPolicy,
    RedisThrottlerStorage,
    LimiterFailurePolicy,
    TokenRateLimiter,
    ConcurrencyLimiter,
  ],
})
export class RateLimitStoreModule {}

@Module({
  imports: [
    RateLimitStoreModule,
    AccountsModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule, ModelsModule],
      inject: [CatalogService, RateLimitPolicy, RedisThrottlerStorage, APP_CONFIG],
      useFactory: (
        catalog: CatalogService,
        policy: RateLimitPolicy,
        storage: RedisThrottlerStorage,
        config: AppConfig,
      ) => ({
        storage,
        setHeaders: false,
        throttlers: [
          {
            name: REQUESTS_THROTTLER,
            ttl: config.rateLimits.windowMs,
            // Unknown models are let through to validation, which answers 400.
            skipIf: (context) => limitsOf(context, catalog, policy) === null,
            limit: (context) => limitsOf(context, catalog, policy)?.rpm ?? 1,
          },
        ],
      }),
    }),
  ],
  controllers: [AdminRateLimitsController],
  providers: [RateLimitsService, GatewayThrottlerGuard],
  exports: [RateLimitStoreModule, GatewayThrottlerGuard],
})
export class RateLimitsModule {}
