import { Injectable } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountResponseDto } from 'src/modules/accounts/dto/account.dto';
import { SessionResponseDto } from 'src/modules/auth/dto/credentials.dto';
import { AuthThrottle } from 'src/modules/auth/auth-throttle';
import { ConsoleSessions, SessionClient } from 'src/modules/auth/console-sessions.service';
import { PasswordHasherService } from 'src/modules/auth/password-hasher.service';
import { MailQueue } from 'src/modules/mail/mail.queue';
import { isOwnMailbox } from 'src/modules/referrals/normalized-mailbox';

// Unambiguous characters only (no 0/O, 1/I/L), since people type referral codes by hand.
const REFERRAL_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const REFERRAL_CODE_LENGTH = 8;

@Injectable()
export class AuthService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly sessions: ConsoleSessions,
    private readonly passwords: PasswordHasherService,
    private readonly throttle: AuthThrottle,
    private readonly mail: MailQueue,
  ) {}

  /** `client.ip` is the client's address as the HTTP server resolved it (behind TRUST_PROXY's proxies only). */
  register(email: string, password: string, client: SessionClient, referralCode?: string): Promise<SessionResponseDto> {
    return this.throttle.run('register', email, client.ip, () =>
      this.createAccount(email, password, client, referralCode),
    );
  }

  login(email: string, password: string, client: SessionClient): Promise<SessionResponseDto> {
    return this.throttle.run('login', email, client.ip, () => this.checkPassword(email, password, client));
  }

  private async createAccount(
    email: string,
    password: string,
    client: SessionClient,
    referralCode?: string,
  ): Promise<SessionResponseDto> {
    const referrer = referralCode ? await this.accounts.findByReferralCode(referralCode.trim().toUpperCase()) : null;
    if (referralCode && !referrer) {
      throw ApiError.invalid(`Unknown referral code '${referralCode}'.`, 'referralCode');
    }
    const passwordHash = await this.passwords.hash(password);
    // A second address of the referrer's own mailbox registers as any account, linked to nobody: its
    // spending earns no referral, and the referrer is told nothing (invitedCount leaves it out).
    const referredBy = referrer && !isOwnMailbox(email, referrer.email) ? referrer.id : null;
    for (let attempt = 0; attempt < 5; attempt++) {
      const created = await this.accounts.create({
        email: email.trim().toLowerCase(),
        passwordHash,
        referralCode: newReferralCode(),
        referredBy,
      });
      if (created instanceof AccountEntity) {
        await this.mail.sendVerification(created.id);
        return this.session(created, client);
      }
      if (created.conflict === 'email') {
        throw new ApiError(ErrorKind.Conflict, 'An account with this e-mail already exists.', 'email', 'email_taken');
      }
    }
    throw new Error('Could not allocate a unique referral code');
  }

  private async checkPassword(email: string, password: string, client: SessionClient): Promise<SessionResponseDto> {
    const account = await this.accounts.findByEmail(email.trim().toLowerCase());
    // An unknown e-mail costs a hash too, so a login's timing does not tell whether an account exists.
    const valid = await this.passwords.verify(password, account?.passwordHash ?? this.passwords.placeholderHash);
    if (!account || !valid) {
      throw new ApiError(ErrorKind.InvalidCredentials, 'Incorrect e-mail or password.');
    }
    return this.session(account, client);
  }

  private async session(account: AccountEntity, client: SessionClient): Promise<SessionResponseDto> {
    return { ...(await this.sessions.open(account.id, client)), account: AccountResponseDto.from(account) };
  }
}

function newReferralCode(): string {
  let code = '';
  for (let i = 0; i < REFERRAL_CODE_LENGTH; i++) {
    code += REFERRAL_ALPHABET[randomInt(REFERRAL_ALPHABET.length)];
  }
  return code;
}
