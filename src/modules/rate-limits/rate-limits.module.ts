import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { ModelsModule } from 'src/modules/models/models.module';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';
import { AdminRateLimitsController } from 'src/modules/rate-limits/admin-rate-limits.controller';
import { ConsoleModelsController } from 'src/modules/rate-limits/console-models.controller';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RateLimitsRepository } from 'src/modules/rate-limits/rate-limits.repository';
import { RateLimitsService } from 'src/modules/rate-limits/rate-limits.service';
import { RedisThrottlerStorage } from 'src/modules/rate-limits/redis-throttler.storage';
import { RequestRateLimiter } from 'src/modules/rate-limits/request-rate-limiter.service';
import { TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter.service';

/**
 * Every limit a request meets: requests and tokens per minute (shared across processes in Redis),
 * this process's concurrency cap, the per-account overrides an operator sets, and the Redis windows
 * the console's login throttle counts in; and the console's list of models with the account's own limits
 * on each (here, not in models: the catalog sits below the limits and imports nothing of them).
 */
@Module({
  imports: [TypeOrmModule.forFeature([AccountRateLimitEntity]), AccountsModule, ModelsModule],
  controllers: [AdminRateLimitsController, ConsoleModelsController],
  providers: [
    RateLimitsRepository,
    RateLimitsService,
    RateLimitPolicy,
    RedisThrottlerStorage,
    LimiterFailurePolicy,
    RequestRateLimiter,
    TokenRateLimiter,
    ConcurrencyLimiter,
  ],
  exports: [
    RateLimitPolicy,
    RedisThrottlerStorage,
    LimiterFailurePolicy,
    RequestRateLimiter,
    TokenRateLimiter,
    ConcurrencyLimiter,
  ],
})
export class RateLimitsModule {}
