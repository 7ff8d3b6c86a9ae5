import { Body, Controller, HttpCode, Ip, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal, PublicRoute } from 'src/common/decorators/auth.decorators';
import {
  EmailVerifiedResponseDto,
  MailAcceptedResponseDto,
  PasswordResetConfirmDto,
  PasswordResetRequestDto,
  VerifyEmailDto,
} from 'src/modules/account-security/dto/account-security.dto';
import { EmailVerificationService } from 'src/modules/account-security/email-verification.service';
import { PasswordResetService } from 'src/modules/account-security/password-reset.service';

const RESET_ACCEPTED = 'If an account uses this address, a mail with a link is on its way.';

/** Links mailed to an account's address: verifying it, and setting a new password without the old one. */
@ApiTags('console')
@Controller('console/auth')
@ApiTooManyRequestsResponse({ description: 'Too many requests; see the retry-after header' })
@ApiServiceUnavailableResponse({ description: 'The throttle cannot be checked (Redis away); retry shortly' })
export class AccountSecurityController {
  constructor(
    private readonly verification: EmailVerificationService,
    private readonly reset: PasswordResetService,
  ) {}

  @Post('verify-email')
  @PublicRoute()
  @HttpCode(200)
  @ApiOkResponse({ type: EmailVerifiedResponseDto })
  async verifyEmail(@Body() dto: VerifyEmailDto, @Ip() ip: string): Promise<EmailVerifiedResponseDto> {
    await this.verification.verify(dto.token, ip);
    return { emailVerified: true };
  }

  @Post('verify-email/resend')
  @ConsoleAuth()
  @HttpCode(202)
  @ApiAcceptedResponse({ type: MailAcceptedResponseDto })
  @ApiConflictResponse({ description: 'The address is verified already (code email_already_verified)' })
  async resendVerificationEmail(@CurrentPrincipal() principal: ConsolePrincipal): Promise<MailAcceptedResponseDto> {
    await this.verification.resend(principal.accountId);
    return { message: 'A new verification mail is on its way.' };
  }

  @Post('password-reset')
  @PublicRoute()
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: MailAcceptedResponseDto,
    description: 'The same answer whether an account uses the address or not',
  })
  async requestPasswordReset(@Body() dto: PasswordResetRequestDto, @Ip() ip: string): Promise<MailAcceptedResponseDto> {
    await this.reset.request(dto.email, ip);
    return { message: RESET_ACCEPTED };
  }

  @Post('password-reset/confirm')
  @PublicRoute()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The password is changed; the token is used up' })
  confirmPasswordReset(@Body() dto: PasswordResetConfirmDto, @Ip() ip: string): Promise<void> {
    return this.reset.confirm(dto.token, dto.newPassword, ip);
  }
}
