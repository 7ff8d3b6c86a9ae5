import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

const MINUTE_MS = 60_000;

/**
 * Per-minute windows in Redis for what money flows let a customer repeat (redemption tries, top-up
 * orders), shared by every API process. Closed while Redis is away: these bound guessing and the
 * work a customer can make us do at the wallets.
 */
@Injectable()
export class PaymentThrottle {
  constructor(
    private readonly storage: RedisThrottlerStorage,
    private readonly failures: LimiterFailurePolicy,
  ) {}

  /** Counts one try in every window, or refuses it with 429 and `retry-after`, saying `what` was refused. */
  async admit(windows: Window[], what: string): Promise<void> {
    const record = await this.failures.check(() => this.storage.incrementWindows(windows, MINUTE_MS));
    if (record.refusedBy >= 0) {
      const retryAfter = Math.max(1, Math.ceil(record.resetMs / 1000));
      throw new ApiError(ErrorKind.RateLimited, `Too many ${what}. Retry after ${retryAfter}s.`, null, undefined, {
        'retry-after': String(retryAfter),
      });
    }
  }
}
