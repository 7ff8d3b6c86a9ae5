import { Body, Controller, HttpCode, Ip, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { PasswordChangeDto } from 'src/modules/auth/dto/session.dto';
import { PasswordChangeService } from 'src/modules/auth/password-change.service';

@ApiTags('console')
@ConsoleAuth()
@Controller('console/account')
export class PasswordController {
  constructor(private readonly service: PasswordChangeService) {}

  @Post('password')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Changed; every other session of the account is logged out, this one stays' })
  @ApiBadRequestResponse({
    description:
      'Wrong current password (param currentPassword, code invalid_credentials), or a new password that is too short, too long or the same',
  })
  @ApiTooManyRequestsResponse({ description: 'Too many failed attempts; see the retry-after header' })
  @ApiServiceUnavailableResponse({ description: 'Too many password checks in progress; retry after a second' })
  changePassword(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Body() dto: PasswordChangeDto,
    @Ip() ip: string,
  ): Promise<void> {
    return this.service.change(principal, dto.currentPassword, dto.newPassword, ip);
  }
}
