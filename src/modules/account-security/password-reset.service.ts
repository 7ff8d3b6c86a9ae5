import { Injectable } from '@nestjs/common';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountSecurityThrottle } from 'src/modules/account-security/account-security.throttle';
import { AccountTokenPurpose } from 'src/modules/mail/account-token.entity';
import { AccountTokensRepository } from 'src/modules/mail/account-tokens.repository';
import { invalidToken } from 'src/modules/account-security/email-verification.service';
import { ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { PasswordHasherService } from 'src/modules/auth/password-hasher.service';
import { MailQueue } from 'src/modules/mail/mail.queue';

@Injectable()
export class PasswordResetService {
  constructor(
    private readonly tokens: AccountTokensRepository,
    private readonly accounts: AccountsRepository,
    private readonly throttle: AccountSecurityThrottle,
    private readonly mail: MailQueue,
    private readonly passwords: PasswordHasherService,
    private readonly sessions: ConsoleSessions,
  ) {}

  /**
   * Hands the address to the worker, which looks it up and mails a reset link if an account uses it.
   * Nothing here reads the accounts: the same work, the same answer and the same time for any address.
   */
  async request(email: string, ip: string): Promise<void> {
    await this.throttle.passwordReset(email, ip);
    await this.mail.sendPasswordReset(email.trim().toLowerCase());
  }

  /**
   * Sets the password of the token's account and uses the token up (and every other reset token of
   * the account). The token is checked before the new password is hashed, so forged tokens cost no
   * scrypt; it is used up in the transaction that writes the hash, so a token works exactly once.
   * Every console session of the account ends in that same transaction: whoever knew the old password
   * may hold one, and the person resetting has none.
   */
  async confirm(token: string, newPassword: string, ip: string): Promise<void> {
    await this.throttle.followToken(ip);
    if (!(await this.tokens.peek(token, AccountTokenPurpose.PasswordReset))) {
      throw invalidToken();
    }
    const passwordHash = await this.passwords.hash(newPassword);
    const accountId = await this.tokens.inTransaction(async (manager) => {
      const id = await this.tokens.consume(manager, token, AccountTokenPurpose.PasswordReset);
      if (id) {
        await this.accounts.updatePasswordHash(id, passwordHash, manager);
        await this.tokens.consumeAll(manager, id, AccountTokenPurpose.PasswordReset);
        await this.sessions.revokeAll(id, { manager });
      }
      return id;
    });
    if (!accountId) {
      throw invalidToken();
    }
  }
}
