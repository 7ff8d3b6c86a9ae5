import { Body, Controller, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiServiceUnavailableResponse, ApiTags, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { LoginDto, RegisterDto, SessionResponseDto } from 'src/modules/accounts/dto/account.dto';
import { AuthService } from 'src/modules/auth/auth.service';

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
  register(@Body() dto: RegisterDto, @Ip() ip: string): Promise<SessionResponseDto> {
    return this.service.register(dto.email, dto.password, ip, dto.referralCode);
  }

  @Post('login')
  @HttpCode(200)
  login(@Body() dto: LoginDto, @Ip() ip: string): Promise<SessionResponseDto> {
    return this.service.login(dto.email, dto.password, ip);
  }
}
