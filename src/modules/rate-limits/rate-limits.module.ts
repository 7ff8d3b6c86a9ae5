import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';
import { AdminRateLimitsController } from 'src/modules/rate-limits/admin-rate-limits.controller';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RateLimitsRepository } from 'src/modules/rate-limits/rate-limits.repository';
import { RateLimitsService } from 'src/modules/rate-limits/rate-limits.service';
import { RedisThrottlerStorage } from 'src/modules/rate-limits/redis-throttler.storage';

/**
 * Every limit a request meets, as data the relay's admission counts against (RateLimitPolicy:
 * requests and tokens per minute, the per-account overrides an operator sets), this process's
 * concurrency cap, and the Redis windows the console's login throttle counts in.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AccountRateLimitEntity]), AccountsModule],
  controllers: [AdminRateLimitsController],
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
