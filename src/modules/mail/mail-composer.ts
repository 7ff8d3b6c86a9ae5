import { Inject, Injectable } from '@nestjs/common';
import { MailJob, MailJobPayloads } from 'src/common/queue/queue.constants';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountTokenPurpose } from 'src/modules/mail/account-token.entity';
import { AccountTokensRepository } from 'src/modules/mail/account-tokens.repository';
import {
  consoleLink,
  lowBalanceMail,
  MailMessage,
  PASSWORD_RESET_TTL_MS,
  passwordResetMail,
  VERIFY_EMAIL_TTL_MS,
  verificationMail,
} from 'src/modules/mail/mail-messages';
import { MailRecipientsRepository } from 'src/modules/mail/mail-recipients.repository';

/** A mail ready to go, and what to undo when it cannot be sent (a token minted for it, which nobody got). */
export interface OutgoingMail {
  message: MailMessage;
  discard(): Promise<void>;
}

const nothingToUndo = () => Promise.resolve();

/**
 * Turns a mail job into its mail, reading the account as it is now: a verification for an account
 * verified meanwhile, a reset for an address no account uses, an alert re-armed by a top-up since,
 * all compose to nothing (null) and the job ends quietly.
 */
@Injectable()
export class MailComposer {
  constructor(
    private readonly recipients: MailRecipientsRepository,
    private readonly tokens: AccountTokensRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  compose(name: MailJob, data: MailJobPayloads[MailJob]): Promise<OutgoingMail | null> {
    switch (name) {
      case MailJob.VerifyEmail:
        return this.verification((data as MailJobPayloads[MailJob.VerifyEmail]).accountId);
      case MailJob.PasswordReset:
        return this.passwordReset((data as MailJobPayloads[MailJob.PasswordReset]).email);
      case MailJob.LowBalance:
        return this.lowBalance((data as MailJobPayloads[MailJob.LowBalance]).accountId);
    }
  }

  private async verification(accountId: string): Promise<OutgoingMail | null> {
    const email = await this.recipients.unverifiedAddress(accountId);
    if (email === null) {
      return null;
    }
    const { id, token } = await this.tokens.mint(accountId, AccountTokenPurpose.VerifyEmail, VERIFY_EMAIL_TTL_MS);
    const link = consoleLink(this.config.mail.consoleUrl, 'verify-email', token);
    return { message: verificationMail(email, link), discard: () => this.tokens.discard(id) };
  }

  private async passwordReset(email: string): Promise<OutgoingMail | null> {
    const account = await this.recipients.accountByEmail(email);
    if (!account) {
      return null;
    }
    const { id, token } = await this.tokens.mint(account.id, AccountTokenPurpose.PasswordReset, PASSWORD_RESET_TTL_MS);
    const link = consoleLink(this.config.mail.consoleUrl, 'reset-password', token);
    return { message: passwordResetMail(account.email, link), discard: () => this.tokens.discard(id) };
  }

  private async lowBalance(accountId: string): Promise<OutgoingMail | null> {
    const alert = await this.recipients.lowBalanceAlert(accountId);
    if (!alert) {
      return null;
    }
    const message = lowBalanceMail(alert.email, alert.balance, alert.threshold, this.config.mail.consoleUrl);
    return { message, discard: nothingToUndo };
  }
}
