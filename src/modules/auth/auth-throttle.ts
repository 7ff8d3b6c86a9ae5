import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { domainSlot } from 'src/common/redis/key-slots';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { throttleAddress } from 'src/common/http/client-address';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

export type AuthAction = 'login' | 'register' | 'password-change';

const MINUTE_MS = 60_000;
/**
 * One slot for every sign-in window (key-slots.ts): one attempt is counted in windows of its address
 * and of its e-mail, in one script. Sign-ins are few next to completions; one slot carries them.
 */
const AUTH_SLOT = domainSlot('auth');
const PER_IP_FAILURES_MS = 60 * MINUTE_MS;
const PER_EMAIL_FAILURES_MS = 15 * MINUTE_MS;

// Gives back what a failed attempt was counted as, once it turned out not to fail. A window that
// expired meanwhile is left alone: DECR would recreate it at -1 without an expiry, a credit forever.
const REFUND_SCRIPT = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end`;

/** What a refused attempt is told, by the window that refused it. */
const REFUSALS = [
  'Too many sign-in attempts from your network',
  'Too many failed attempts from your network',
  'Too many failed attempts for this e-mail address',
];

/** An admitted attempt, counted as a failure until `refund` takes it back (it succeeded, or never ran). */
export interface AuthAttempt {
  refund(): Promise<void>;
}

/**
 * Console login and registration throttles, in Redis so that every API process counts together:
 * every attempt per client address per minute; failures per address per hour (a wrong password,
 * an e-mail already taken, an unknown referral code: what probing for accounts produces); and
 * failures per e-mail address per 15 minutes (guessing one account's password from many addresses).
 * An attempt is counted as a failure before it runs and taken back when it succeeds, so concurrent
 * guesses cannot overrun a window and a user's own successful logins never count against them.
 * While Redis cannot answer, every attempt is refused with 503.
 */
@Injectable()
export class AuthThrottle {
  constructor(
    private readonly storage: RedisThrottlerStorage,
    private readonly failures: LimiterFailurePolicy,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.redis.defineCommand('gatewayAuthRefund', { lua: REFUND_SCRIPT });
  }

  /** Counts the attempt in every window, or refuses it with 429 and `retry-after` when one is full. */
  async admit(action: AuthAction, email: string, ip: string): Promise<AuthAttempt> {
    const windows = authWindows(this.config.auth, action, email, ip);
    // Closed (LimiterFailurePolicy): unthrottled, an outage of Redis would open every
    // account to password guessing. Refusing (503) costs sign-ins only while Redis is away.
    const record = await this.failures.check(() => this.storage.incrementWindows(windows, MINUTE_MS));
    if (record.refusedBy >= 0) {
      const retryAfter = Math.max(1, Math.ceil(record.resetMs / 1000));
      throw new ApiError(
        ErrorKind.RateLimited,
        `${REFUSALS[record.refusedBy]}. Retry after ${retryAfter}s.`,
        null,
        undefined,
        { 'retry-after': String(retryAfter) },
      );
    }
    const failureKeys = windows.slice(1).map((window) => window.key);
    return { refund: () => this.refund(failureKeys) };
  }

  /**
   * Runs `check` as one throttled attempt: counted as a failure unless it resolves, or unless it is
   * refused for load (503) before any password was tried.
   */
  async run<T>(action: AuthAction, email: string, ip: string, check: () => Promise<T>): Promise<T> {
    const attempt = await this.admit(action, email, ip);
    try {
      const result = await check();
      await attempt.refund();
      return result;
    } catch (error) {
      if (error instanceof ApiError && error.kind === ErrorKind.Overloaded) {
        await attempt.refund();
      }
      throw error;
    }
  }

  private async refund(keys: string[]): Promise<void> {
    // Best effort: a refund lost to a Redis error only makes the limit a little stricter for a while.
    await runScript(this.redis, 'gatewayAuthRefund', keys.length, ...keys).catch(() => undefined);
  }
}

/** The windows of one attempt, in the order of REFUSALS. E-mails are hashed: Redis holds no addresses. */
export function authWindows(limits: AppConfig['auth'], action: AuthAction, email: string, ip: string): Window[] {
  const address = throttleAddress(ip);
  const emailDigest = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
  return [
    { key: `${AUTH_SLOT}:ip:${address}`, limit: limits.attemptsPerIpPerMinute, ttl: MINUTE_MS },
    { key: `${AUTH_SLOT}:ip-failures:${address}`, limit: limits.failuresPerIpPerHour, ttl: PER_IP_FAILURES_MS },
    {
      key: `${AUTH_SLOT}:${action}-failures:${emailDigest}`,
      limit: limits.failuresPerEmailPer15Min,
      ttl: PER_EMAIL_FAILURES_MS,
    },
  ];
}
