import { applyDecorators, CanActivate, ExecutionContext, Inject, Injectable, UseGuards } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import { AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';

/**
 * Refuses (403 `email_not_verified`) a console account whose address is not verified, when
 * REQUIRE_EMAIL_VERIFICATION is on. Runs after the global AuthGuard attached the principal. A
 * controller's module that uses it imports AccountsModule, for the repository it reads through.
 */
@Injectable()
export class VerifiedEmailGuard implements CanActivate {
  constructor(
    private readonly accounts: AccountsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.config.mail.requireEmailVerification) {
      return true;
    }
    const { principal } = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (principal?.kind !== AuthKind.Console) {
      throw new Error('RequireVerifiedEmail used on a route without a console session');
    }
    if ((await this.accounts.isEmailVerified(principal.accountId)) === false) {
      throw new ApiError(
        ErrorKind.EmailNotVerified,
        'Verify your e-mail address first: follow the link we mailed you, or ask for a new one.',
      );
    }
    return true;
  }
}

/** The route needs a verified e-mail address (keys, top-ups). */
export const RequireVerifiedEmail = () =>
  applyDecorators(
    UseGuards(VerifiedEmailGuard),
    ApiForbiddenResponse({ description: 'The account has not verified its e-mail address (code email_not_verified)' }),
  );
