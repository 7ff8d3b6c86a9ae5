import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

/** Mailed tokens are 43 characters of base64url; anything much longer is not one of ours. */
const TOKEN_EXAMPLE = 'q3JxV9mB0c6Yy1kTzR2p8wE4nL5sH7aD0fG2jK9uXcM';

export class VerifyEmailDto {
  @ApiProperty({ description: 'The token from the link in the verification mail', example: TOKEN_EXAMPLE })
  @IsString()
  @Length(1, 200, { message: 'token must be the token from the mail' })
  token: string;
}

export class EmailVerifiedResponseDto {
  @ApiProperty({ description: 'Always true: the address is verified', example: true })
  emailVerified: boolean;
}

export class MailAcceptedResponseDto {
  @ApiProperty({
    description: 'What happens next; the same text whatever the address',
    example: 'If an account uses this address, a mail with a link is on its way.',
  })
  message: string;
}

export class PasswordResetRequestDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(320)
  email: string;
}

export class PasswordResetConfirmDto {
  @ApiProperty({
    description: 'The token from the link in the reset mail (valid 30 minutes, once)',
    example: TOKEN_EXAMPLE,
  })
  @IsString()
  @Length(1, 200, { message: 'token must be the token from the mail' })
  token: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'a new correct horse battery staple' })
  @IsString()
  @Length(8, 128, { message: 'newPassword must be 8 to 128 characters long' })
  newPassword: string;
}
