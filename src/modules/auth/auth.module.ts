import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { AuthController } from 'src/modules/auth/auth.controller';
import { AuthService } from 'src/modules/auth/auth.service';
import { AuthThrottle } from 'src/modules/auth/auth-throttle';
import { PasswordHasherService } from 'src/modules/auth/password-hasher.service';
import { MailModule } from 'src/modules/mail/mail.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [
    AccountsModule,
    RateLimitsModule,
    MailModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ secret: config.jwtSecret, signOptions: { expiresIn: '12h' } }),
    }),
  ],
  controllers: [AuthController],
  providers: [AuthService, AuthThrottle, PasswordHasherService],
  exports: [AuthService, PasswordHasherService],
})
export class AuthModule {}
