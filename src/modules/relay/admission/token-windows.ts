import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { metrics } from 'src/common/metrics/metrics';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { CORRECT_TOKENS, WindowCorrection } from 'src/common/redis/window-scripts';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { LimitScope } from 'src/modules/relay/admission/request-windows';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';

// Replaces the admission estimate with the real count (KEYS: the windows; ARGV[1]: the difference).
const CORRECT_SCRIPT = `${CORRECT_TOKENS}
correctTokens(KEYS, ARGV[1])
return 1`;

/** A request's token windows (aligned to the minute, so the correction finds the one counted in). */
export interface TokenWindows {
  scope: LimitScope;
  keys: string[];
  limits: number[];
  /** The estimate counted at admission. */
  amount: number;
  ttlMs: number;
  resetMs: number;
}

/** What the windows said, from the script that counted them (AdmissionCounts). */
export interface TokenCount {
  /** Index of the window the estimate would take past its limit, -1 when counted. */
  refusedBy: number;
  /** Tokens used in the refusing window, or in the account's, this request's included, when counted. */
  used: number;
}

export interface TokenAdmission {
  /**
   * The correction that replaces the estimate with the tokens actually used, for the caller to send
   * (with the usage record); null once this or `settle` was called.
   */
  takeCorrection(actualTokens: number): WindowCorrection | null;
  /** Sends that correction now (fire and forget), unless it was taken already. */
  settle(actualTokens: number): void;
  headers: Record<string, string>;
}

/**
 * Tokens per minute per account and model (and end user): which windows a request counts its
 * estimate in, what their count means, and the correction once the real usage is known. The count
 * is made in the balance hold's script (BalanceGateService.admit, with TOKEN_WINDOWS), counted only
 * when the hold is taken.
 */
@Injectable()
export class TokenRateLimiter {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.redis.defineCommand('gatewayTpmCorrect', { lua: CORRECT_SCRIPT });
  }

  windows(scope: LimitScope, limits: EffectiveLimits, estimate: number): TokenWindows {
    const { accountId, modelId, user } = scope;
    const now = Date.now();
    const windowMs = this.config.rateLimits.windowMs;
    const window = Math.floor(now / windowMs);
    const keys = [tokenWindowKey(accountId, modelId, window)];
    const counted = [limits.tpm];
    if (user && limits.endUserTpm) {
      keys.push(tokenWindowKey(accountId, modelId, window, user));
      counted.push(limits.endUserTpm);
    }
    return { scope, keys, limits: counted, amount: estimate, ttlMs: windowMs, resetMs: (window + 1) * windowMs - now };
  }

  /**
   * The 429 when a window refused; else the headers, and the correction to make once usage is known.
   * A refusal that may not be the answer (a quick estimate, tried again closer) is not counted in the metrics.
   */
  verdict(windows: TokenWindows, count: TokenCount, final = true): TokenAdmission {
    const { scope, keys, limits, amount, resetMs } = windows;
    if (count.refusedBy >= 0) {
      const endUser = count.refusedBy === 1 ? scope.user : undefined;
      if (final) {
        metrics.rateLimited.inc({ limit: endUser ? 'end-user-tokens' : 'tokens' });
      }
      const counts = { limit: limits[count.refusedBy], used: count.used, requested: amount, resetMs };
      throw rateLimitExceeded(scope.modelId, 'tokens per minute', counts, endUser);
    }
    let settled = false;
    // Once, whichever comes first: when a recording fails after its correction went out, the
    // give-back that follows must not correct again.
    const takeCorrection = (actual: number): WindowCorrection | null => {
      if (settled) {
        return null;
      }
      settled = true;
      return { keys, delta: actual - amount };
    };
    return {
      headers: {
        'x-ratelimit-limit-tokens': String(limits[0]),
        'x-ratelimit-remaining-tokens': String(Math.max(0, limits[0] - count.used)),
        'x-ratelimit-reset-tokens': resetIn(resetMs),
      },
      takeCorrection,
      settle: (actual) => this.correct(takeCorrection(actual)),
    };
  }

  private correct(correction: WindowCorrection | null): void {
    if (!correction || correction.delta === 0) {
      return;
    }
    const { keys, delta } = correction;
    runScript(this.redis, 'gatewayTpmCorrect', keys.length, ...keys, String(delta)).catch((error: Error) =>
      this.logger.warn({ err: error.message }, 'could not correct the token window'),
    );
  }
}
