import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountSecurityThrottle } from 'src/modules/account-security/account-security.throttle';
import { AccountTokenPurpose } from 'src/modules/mail/account-token.entity';
import { AccountTokensRepository } from 'src/modules/mail/account-tokens.repository';
import { MailQueue } from 'src/modules/mail/mail.queue';

/** What a token that cannot be used is told, whatever the reason: unknown, used, expired or for something else. */
export const invalidToken = () =>
  ApiError.invalid('This link is invalid, expired or was used already. Ask for a new one.', 'token');

@Injectable()
export class EmailVerificationService {
  constructor(
    private readonly tokens: AccountTokensRepository,
    private readonly accounts: AccountsRepository,
    private readonly throttle: AccountSecurityThrottle,
    private readonly mail: MailQueue,
  ) {}

  /** Marks the token's account verified and uses the token up; an unusable token changes nothing. */
  async verify(token: string, ip: string): Promise<void> {
    await this.throttle.followToken(ip);
    const verified = await this.tokens.inTransaction(async (manager) => {
      const accountId = await this.tokens.consume(manager, token, AccountTokenPurpose.VerifyEmail);
      if (accountId) {
        await this.accounts.markEmailVerified(accountId, manager);
      }
      return accountId !== null;
    });
    if (!verified) {
      throw invalidToken();
    }
  }

  /** Another verification mail, throttled per account; an account verified already is told so (409). */
  async resend(accountId: string): Promise<void> {
    const verified = await this.tokens.isEmailVerified(accountId);
    if (verified === null) {
      throw new ApiError(ErrorKind.NotFound, 'No such account.');
    }
    if (verified) {
      throw new ApiError(ErrorKind.Conflict, 'The e-mail address is verified already.', null, 'email_already_verified');
    }
    await this.throttle.resendVerification(accountId);
    await this.mail.sendVerification(accountId);
  }
}
