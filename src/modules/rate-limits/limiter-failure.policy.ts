import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';

const LOG_EVERY_MS = 5_000;

/**
 * What a limit check does when Redis cannot answer: let the request through (open, the default:
 * an outage of the limiter is not an outage of the API) or refuse it with 503 (closed). Either
 * way it is counted and logged, and the next check tries Redis again, so recovery needs nothing.
 */
@Injectable()
export class LimiterFailurePolicy {
  private lastLogged = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Runs a limit check; on a Redis failure returns `fallback` (open) or throws 503 (closed). `failMode`
   * overrides RATE_LIMIT_FAIL_MODE for a limit that must hold even during an outage.
   */
  async check<T>(run: () => Promise<T>, fallback: T, failMode = this.config.rateLimits.failMode): Promise<T> {
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
        this.logger.error({ err: (error as Error).message, mode: failMode }, 'rate limiter unavailable');
      }
      if (failMode === 'closed') {
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
      return fallback;
    }
  }
}
