import { ConfigError } from 'src/config/config-error';
import { EnvDto } from 'src/config/env.dto';

export interface MailConfig {
  /** nodemailer's SMTP URL (smtp://user:pass@host:587); null: no mail is sent (the worker drops mail jobs). */
  smtpUrl: string | null;
  /** The From header of every mail. */
  from: string;
  /** The web console's public URL: links in mails point at `<consoleUrl>/verify-email?token=…`. */
  consoleUrl: string;
  /**
   * Unverified accounts cannot create keys or top up. Defaults to on when mail can be sent and off
   * when it cannot: required without SMTP_URL, nobody could ever verify.
   */
  requireEmailVerification: boolean;
  /** Tries of one mail (the first included), and the wait before the first retry (doubling after). */
  attempts: number;
  retryDelayMs: number;
}

const DEFAULT_FROM = 'LLM Gateway <no-reply@localhost>';
const DEFAULT_CONSOLE_URL = 'http://localhost:5173';

export function mailConfigOf(dto: EnvDto): MailConfig {
  const smtpUrl = dto.SMTP_URL ?? null;
  const requireEmailVerification = dto.REQUIRE_EMAIL_VERIFICATION
    ? dto.REQUIRE_EMAIL_VERIFICATION === 'true'
    : smtpUrl !== null;
  if (requireEmailVerification && !smtpUrl) {
    throw new ConfigError(
      'Invalid environment variable REQUIRE_EMAIL_VERIFICATION: needs SMTP_URL, or no account could ever verify',
    );
  }
  if (smtpUrl && !dto.CONSOLE_URL) {
    throw new ConfigError('Missing environment variable CONSOLE_URL: required with SMTP_URL, for the links in mails');
  }
  return {
    smtpUrl,
    from: dto.MAIL_FROM ?? DEFAULT_FROM,
    consoleUrl: (dto.CONSOLE_URL ?? DEFAULT_CONSOLE_URL).replace(/\/+$/, ''),
    requireEmailVerification,
    attempts: dto.MAIL_ATTEMPTS ?? 10,
    retryDelayMs: dto.MAIL_RETRY_DELAY_MS ?? 10_000,
  };
}
