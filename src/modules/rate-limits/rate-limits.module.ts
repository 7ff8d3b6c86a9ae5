import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountGroupsModule } from 'src/modules/account-groups/account-groups.module';
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

/**
 * Every limit a request meets, as data the relay's admission counts against (RateLimitPolicy:
 * requests and tokens per minute, the per-account overrides an operator sets), this process's
 * concurrency cap, and the Redis windows the console's login throttle counts in; and the console's
 * list of models with the account's own prices and limits on each (here, not in models: the catalog
 * sits below the limits and imports nothing of them).
 */
@Module({
  imports: [TypeOrmModule.forFeature([AccountRateLimitEntity]), AccountsModule, ModelsModule, AccountGroupsModule],
  controllers: [AdminRateLimitsController, ConsoleModelsController],
  providers: [
    RateLimitsRepository,
    RateLimitsService,
    RateLimitPolicy,
    RedisThrottlerStorage,
    LimiterFailurePolicy,
    ConcurrencyLimiter,
  ],
  exports: [RateLimitPolicy, RedisThrottlerStorage, LimiterFailurePolicy, ConcurrencyLimiter],
})
export class RateLimitsModule {}
