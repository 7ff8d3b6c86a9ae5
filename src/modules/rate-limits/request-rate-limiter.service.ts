import { Inject, Injectable } from '@nestjs/common';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { requestWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

/** Who a request is counted for: its account on its model, and its end user (the body's `user`) if it named one. */
export interface LimitScope {
  accountId: string;
  modelId: string;
  user?: string;
}

/**
 * Requests per minute per account and model, and per end user when the operator set that, counted
 * on @nestjs/throttler's storage contract (RedisThrottlerStorage): every API process counts in the
 * same windows. Counted by the completion admission rather than a ThrottlerGuard, so that this
 * count, the tokens per minute and the balance hold leave in one Redis write (a round trip of its
 * own cost ~0.15 ms of every request's latency); the one difference is that a request refused by
 * validation (400) is not counted.
 */
@Injectable()
export class RequestRateLimiter {
  constructor(
    private readonly storage: RedisThrottlerStorage,
    private readonly failures: LimiterFailurePolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Counts the request in all its windows, or in none when one is full (then rejects with the 429).
   * The Redis call is sent before the first await, so a caller can batch it with others.
   * `setHeaders` receives the account window's `x-ratelimit-*-requests` headers, admitted or refused
   * by that window (none when the end user's window refused, or when Redis could not answer).
   */
  async admit(
    scope: LimitScope,
    limits: EffectiveLimits,
    setHeaders: (headers: Record<string, string>) => void,
  ): Promise<void> {
    const { accountId, modelId: model, user } = scope;
    // The account's window on the model first, then the end user's when the operator limits end users.
    const windows: Window[] = [{ key: requestWindowKey(accountId, model), limit: limits.rpm }];
    if (user && limits.endUserRpm) {
      windows.push({ key: requestWindowKey(accountId, model, user), limit: limits.endUserRpm });
    }
    const ttl = this.config.rateLimits.windowMs;
    const record = await this.failures.check(() => this.storage.incrementWindows(windows, ttl), null);
    if (!record) {
      return;
    }
    const account = windows[0];
    if (record.refusedBy !== 1) {
      setHeaders({
        'x-ratelimit-limit-requests': String(account.limit),
        'x-ratelimit-remaining-requests': String(Math.max(0, account.limit - record.hits)),
        'x-ratelimit-reset-requests': resetIn(record.resetMs),
      });
    }
    if (record.refusedBy >= 0) {
      const endUser = record.refusedBy === 1 ? user : undefined;
      metrics.rateLimited.inc({ limit: endUser ? 'end-user-requests' : 'requests' });
      const counts = {
        limit: windows[record.refusedBy].limit,
        used: record.hits,
        requested: 1,
        resetMs: record.resetMs,
      };
      throw rateLimitExceeded(model, 'requests per minute', counts, endUser);
    }
  }
}
