import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { domainSlot } from 'src/common/redis/key-slots';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { throttleAddress } from 'src/common/http/client-address';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** One slot for every mail window (key-slots.ts): a reset is counted per address and per e-mail in one script. */
const MAIL_SLOT = domainSlot('mail');

/** Mails one account may ask for again: one a minute, five a day. */
export const RESEND_PER_MINUTE = 1;
export const RESEND_PER_DAY = 5;
/** Reset mails to one address an hour, whoever asks: a mailbox cannot be flooded through us. */
export const RESETS_PER_EMAIL_PER_HOUR = 3;

const digest = (text: string) => createHash('sha256').update(text.trim().toLowerCase()).digest('base64url');

/**
 * Fixed windows in Redis (shared by every API process) for the mails an account or a stranger can
 * ask for, and for following tokens. Closed while Redis cannot answer (503): unthrottled, an outage
 * would let anyone send our mail to any address.
 */
@Injectable()
export class AccountSecurityThrottle {
  constructor(
    private readonly storage: RedisThrottlerStorage,
    private readonly failures: LimiterFailurePolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  resendVerification(accountId: string): Promise<void> {
    return this.admit([
      { key: `${MAIL_SLOT}:verify:min:${accountId}`, limit: RESEND_PER_MINUTE, ttl: MINUTE_MS },
      { key: `${MAIL_SLOT}:verify:day:${accountId}`, limit: RESEND_PER_DAY, ttl: DAY_MS },
    ]);
  }

  /** Counted the same whether an account uses the address or not: the answer must not tell. */
  passwordReset(email: string, ip: string): Promise<void> {
    return this.admit([
      this.perAddress('reset', ip),
      { key: `${MAIL_SLOT}:reset:${digest(email)}`, limit: RESETS_PER_EMAIL_PER_HOUR, ttl: HOUR_MS },
    ]);
  }

  /** Following a mailed token (verification, reset): bounded per client address like sign-ins. */
  followToken(ip: string): Promise<void> {
    return this.admit([this.perAddress('token', ip)]);
  }

  private perAddress(action: string, ip: string): Window {
    const limit = this.config.auth.attemptsPerIpPerMinute;
    return { key: `${MAIL_SLOT}:${action}:ip:${throttleAddress(ip)}`, limit, ttl: MINUTE_MS };
  }

  private async admit(windows: Window[]): Promise<void> {
    const record = await this.failures.check(() => this.storage.incrementWindows(windows, MINUTE_MS));
    if (record.refusedBy >= 0) {
      const retryAfter = Math.max(1, Math.ceil(record.resetMs / 1000));
      throw new ApiError(ErrorKind.RateLimited, `Too many requests. Retry after ${retryAfter}s.`, null, undefined, {
        'retry-after': String(retryAfter),
      });
    }
  }
}
