import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { LoginDto, RegisterDto, SessionResponseDto } from 'src/modules/accounts/dto/account.dto';
import { AuthService } from 'src/modules/auth/auth.service';

@ApiTags('console')
@PublicRoute()
@Controller('console/auth')
export class AuthController {
  constructor(private readonly service: AuthService) {}

  @Post('register')
  register(@Body() dto: RegisterDto): Promise<SessionResponseDto> {
    return this.service.register(dto.email, dto.password, dto.referralCode);
  }

  @Post('login')
  @HttpCode(200)
  login(@Body() dto: LoginDto): Promise<SessionResponseDto> {
    return this.service.login(dto.email, dto.password);
  }
}
