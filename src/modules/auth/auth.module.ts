import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { AuthController } from 'src/modules/auth/auth.controller';
import { AuthService } from 'src/modules/auth/auth.service';
import { AuthThrottle } from 'src/modules/auth/auth-throttle';
import { ConsoleSessionEntity } from 'src/modules/auth/console-session.entity';
import { ConsoleSessionsRepository } from 'src/modules/auth/console-sessions.repository';
import { ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { PasswordChangeService } from 'src/modules/auth/password-change.service';
import { PasswordController } from 'src/modules/auth/password.controller';
import { PasswordHasherService } from 'src/modules/auth/password-hasher.service';
import { SessionClock } from 'src/modules/auth/session-clock';
import { SessionsController } from 'src/modules/auth/sessions.controller';
import { MailModule } from 'src/modules/mail/mail.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [
    AccountsModule,
    RateLimitsModule,
    TypeOrmModule.forFeature([ConsoleSessionEntity]),
    MailModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        secret: config.jwtSecret,
        signOptions: { expiresIn: config.auth.accessTokenTtlSeconds },
      }),
    }),
  ],
  controllers: [AuthController, SessionsController, PasswordController],
  providers: [
    AuthService,
    AuthThrottle,
    PasswordHasherService,
    ConsoleSessions,
    ConsoleSessionsRepository,
    SessionClock,
    PasswordChangeService,
  ],
  exports: [AuthService, ConsoleSessions, PasswordHasherService],
})
export class AuthModule {}
