import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER, LogTarget } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';

const LOG_EVERY_MS = 5_000;

/**
 * What a limit check does when Redis cannot answer: refuse with 503. Every limit that runs on its
 * own (sign-ins, account-security mails, top-ups, redemptions) must hold during an outage:
 * unthrottled, it would open accounts to guessing. The completion routes' limits are counted in the
 * balance hold's own script, which fails with it. A failure is counted and logged (at most every
 * few seconds), and the next check tries Redis again, so recovery needs nothing.
 */
@Injectable()
export class LimiterFailurePolicy {
  private lastLogged = 0;

  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  /**
   * Runs a limit check; on a Redis failure throws 503 (a limit decision passes through untouched).
   * `request`: the request checked, whose reqId the failure's line carries.
   */
  async check<T>(run: () => Promise<T>, request?: LogTarget): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ApiError) {
        throw error;
      }
      metrics.limiterErrors.inc();
      const now = Date.now();
      if (now - this.lastLogged > LOG_EVERY_MS) {
        this.lastLogged = now;
        (request?.log ?? this.logger).error({ err: (error as Error).message }, 'rate limiter unavailable');
      }
      throw new ApiError(
        ErrorKind.Overloaded,
        'Rate limiting is temporarily unavailable. Retry shortly.',
        null,
        undefined,
        {
          'retry-after': '10',
        },
      );
    }
  }
}
