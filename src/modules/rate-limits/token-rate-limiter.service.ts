import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { metrics } from 'src/common/metrics/metrics';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { LimitScope } from 'src/modules/rate-limits/request-rate-limiter.service';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';

// Windows are aligned to the minute, so the correction at the end of a request finds the very
// window its admission counted in (the key names it). KEYS: account window, optional end-user window.
// ARGV: tokens, account limit, end-user limit, ttl. Returns {status, used, limit}: 1 admitted, 0 account over, 2 end user over.
const ADMIT_SCRIPT = `
local amount = tonumber(ARGV[1])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used + amount > tonumber(ARGV[2]) then return {0, used} end
if KEYS[2] then
  local endUserUsed = tonumber(redis.call('GET', KEYS[2]) or '0')
  if endUserUsed + amount > tonumber(ARGV[3]) then return {2, endUserUsed} end
  redis.call('INCRBY', KEYS[2], amount)
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
used = redis.call('INCRBY', KEYS[1], amount)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, used}`;

// Replaces the admission estimate with the real count, in windows that still exist; never below zero.
const CORRECT_SCRIPT = `
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    local value = redis.call('INCRBY', key, ARGV[1])
    if value < 0 then redis.call('SET', key, 0, 'KEEPTTL') end
  end
end
return 1`;

export interface TokenAdmission {
  /** Replaces the estimate with the tokens actually used (fire and forget); only the first call counts. */
  settle(actualTokens: number): void;
  headers: Record<string, string>;
}

/** Tokens per minute per account and model (and end user), counted in Redis across all API processes. */
@Injectable()
export class TokenRateLimiter {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly failures: LimiterFailurePolicy,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // No fixed key count: the end-user window is optional, so calls pass the count first.
    this.redis.defineCommand('gatewayTpmAdmit', { lua: ADMIT_SCRIPT });
    this.redis.defineCommand('gatewayTpmCorrect', { lua: CORRECT_SCRIPT });
  }

  /** Counts `estimate` tokens now; 429 when that would pass a limit. */
  async admit(scope: LimitScope, effective: EffectiveLimits, estimate: number): Promise<TokenAdmission> {
    const { user } = scope;
    const limits = {
      accountId: scope.accountId,
      modelId: scope.modelId,
      tpm: effective.tpm,
      endUser: user && effective.endUserTpm ? { id: user, tpm: effective.endUserTpm } : undefined,
    };
    const now = Date.now();
    const windowMs = this.config.rateLimits.windowMs;
    const window = Math.floor(now / windowMs);
    const resetMs = (window + 1) * windowMs - now;
    const accountKey = tokenWindowKey(limits.accountId, limits.modelId, window);
    const endUserKey = limits.endUser
      ? tokenWindowKey(limits.accountId, limits.modelId, window, limits.endUser.id)
      : '';
    const keys = endUserKey ? [accountKey, endUserKey] : [accountKey];
    const result = await this.failures.check(async () => {
      const args = [String(estimate), String(limits.tpm), String(limits.endUser?.tpm ?? 0), String(windowMs)];
      return runScript<[number, number]>(this.redis, 'gatewayTpmAdmit', keys.length, ...keys, ...args);
    }, null);
    if (!result) {
      return { settle: () => undefined, headers: {} };
    }
    const [status, used] = result;
    let settled = false;
    if (status !== 1) {
      metrics.rateLimited.inc({ limit: status === 2 ? 'end-user-tokens' : 'tokens' });
      const limit = status === 2 ? limits.endUser!.tpm : limits.tpm;
      const endUser = status === 2 ? limits.endUser!.id : undefined;
      throw rateLimitExceeded(
        limits.modelId,
        'tokens per minute',
        { limit, used, requested: estimate, resetMs },
        endUser,
      );
    }
    return {
      headers: {
        'x-ratelimit-limit-tokens': String(limits.tpm),
        'x-ratelimit-remaining-tokens': String(Math.max(0, limits.tpm - used)),
        'x-ratelimit-reset-tokens': resetIn(resetMs),
      },
      // Once: when a recording fails after its correction went out, the give-back that follows must not correct again.
      settle: (actual) => {
        if (!settled) {
          settled = true;
          this.correct(keys, actual - estimate);
        }
      },
    };
  }

  private correct(keys: string[], delta: number): void {
    if (delta === 0) {
      return;
    }
    runScript(this.redis, 'gatewayTpmCorrect', keys.length, ...keys, String(delta)).catch((error: Error) =>
      this.logger.warn({ err: error.message }, 'could not correct the token window'),
    );
  }
}
