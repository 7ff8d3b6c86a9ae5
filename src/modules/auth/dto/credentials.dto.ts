import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { AccountResponseDto } from 'src/modules/accounts/dto/account.dto';
import { SessionTokensDto } from 'src/modules/auth/dto/session.dto';

export class RegisterDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(320)
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery staple' })
  @IsString()
  @Length(8, 128, { message: 'password must be 8 to 128 characters long' })
  password: string;

  @ApiPropertyOptional({ description: "An existing account's referral code", example: 'K7QX2MPA' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  referralCode?: string;
}

export class LoginDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsString()
  @MaxLength(320)
  email: string;

  @ApiProperty({ example: 'correct horse battery staple' })
  @IsString()
  @MaxLength(128)
  password: string;
}

/** The answer of login and registration: the session's tokens and the account. */
export class SessionResponseDto extends SessionTokensDto {
  @ApiProperty({ type: AccountResponseDto })
  account: AccountResponseDto;
}
