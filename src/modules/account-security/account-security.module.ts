import { Module } from '@nestjs/common';
import { AccountSecurityController } from 'src/modules/account-security/account-security.controller';
import { AccountSecurityThrottle } from 'src/modules/account-security/account-security.throttle';
import { EmailVerificationService } from 'src/modules/account-security/email-verification.service';
import { PasswordResetService } from 'src/modules/account-security/password-reset.service';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { AuthModule } from 'src/modules/auth/auth.module';
import { MailModule } from 'src/modules/mail/mail.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

/**
 * E-mail verification and password reset by mailed links (the API's side: following the links, and
 * asking for mails). Tokens are minted by the worker as it sends (MailComposer).
 */
@Module({
  imports: [AccountsModule, AuthModule, MailModule, RateLimitsModule],
  controllers: [AccountSecurityController],
  providers: [AccountSecurityThrottle, EmailVerificationService, PasswordResetService],
})
export class AccountSecurityModule {}
