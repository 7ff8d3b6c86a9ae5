import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AuthThrottle } from 'src/modules/auth/auth-throttle';
import { ConsoleIdentity, ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { PasswordHasherService } from 'src/modules/auth/password-hasher.service';
import { DataSource } from 'typeorm';

/**
 * A signed-in customer's password change. It needs the current password, throttled like a login
 * (a stolen access token must not become a way to guess it), and ends every other session.
 */
@Injectable()
export class PasswordChangeService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly sessions: ConsoleSessions,
    private readonly passwords: PasswordHasherService,
    private readonly throttle: AuthThrottle,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async change(identity: ConsoleIdentity, currentPassword: string, newPassword: string, ip: string): Promise<void> {
    const account = await this.accounts.findById(identity.accountId);
    if (!account) {
      throw new ApiError(ErrorKind.InvalidSession, 'Invalid or expired console session. Log in again.');
    }
    await this.throttle.run('password-change', account.email, ip, async () => {
      if (!(await this.passwords.verify(currentPassword, account.passwordHash))) {
        // 400, not login's 401: the session is fine, and a console treats 401 as "log in again".
        throw new ApiError(
          ErrorKind.InvalidRequest,
          'The current password is incorrect.',
          'currentPassword',
          'invalid_credentials',
        );
      }
    });
    if (newPassword === currentPassword) {
      throw ApiError.invalid('newPassword must differ from the current password.', 'newPassword');
    }
    const passwordHash = await this.passwords.hash(newPassword);
    await this.dataSource.transaction(async (manager) => {
      await this.accounts.updatePasswordHash(account.id, passwordHash, manager);
      await this.sessions.revokeAll(account.id, { except: identity.sessionId, manager });
    });
  }
}
