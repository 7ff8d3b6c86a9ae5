import { Injectable } from '@nestjs/common';
import { metrics } from 'src/common/metrics/metrics';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

/** A request's requests-per-minute windows, as the throttler guard resolved them. */
export interface RequestWindows {
  /** The account's window on the model first, then the end user's when the operator limits end users. */
  windows: Window[];
  ttl: number;
  model: string;
  user?: string;
}

/** Requests per minute, counted on the throttler's Redis storage: every API process counts in the same windows. */
@Injectable()
export class RequestRateLimiter {
  constructor(
    private readonly storage: RedisThrottlerStorage,
    private readonly failures: LimiterFailurePolicy,
  ) {}

  /**
   * Counts the request in all its windows, or in none when one is full (then rejects with the 429).
   * The Redis call is sent before the first await, so a caller can batch it with others.
   * `setHeaders` receives the account window's `x-ratelimit-*-requests` headers, admitted or refused
   * by that window (none when the end user's window refused, or when Redis could not answer).
   */
  async admit(check: RequestWindows, setHeaders: (headers: Record<string, string>) => void): Promise<void> {
    const { windows, ttl, model, user } = check;
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
