import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { LoginDto, RegisterDto, SessionResponseDto } from 'src/modules/auth/dto/credentials.dto';
import { AuthService } from 'src/modules/auth/auth.service';
import { SessionClient } from 'src/modules/auth/console-sessions.service';
import { CurrentClient } from 'src/modules/auth/current-client.decorator';

@ApiTags('console')
@PublicRoute()
@Controller('console/auth')
@ApiTooManyRequestsResponse({
  description: 'Too many attempts from this address, or failures for this e-mail; see the retry-after header',
})
@ApiServiceUnavailableResponse({ description: 'Too many password checks in progress; retry after a second' })
export class AuthController {
  constructor(private readonly service: AuthService) {}

  @Post('register')
  @ApiCreatedResponse({ type: SessionResponseDto })
  @ApiConflictResponse({ description: 'The e-mail is registered already (code email_taken)' })
  register(@Body() dto: RegisterDto, @CurrentClient() client: SessionClient): Promise<SessionResponseDto> {
    return this.service.register(dto.email, dto.password, client, dto.referralCode);
  }

  @Post('login')
  @HttpCode(200)
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiUnauthorizedResponse({ description: 'Wrong e-mail or password (code invalid_credentials)' })
  login(@Body() dto: LoginDto, @CurrentClient() client: SessionClient): Promise<SessionResponseDto> {
    return this.service.login(dto.email, dto.password, client);
  }
}
