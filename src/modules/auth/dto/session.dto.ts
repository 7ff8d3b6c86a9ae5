import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';

/** The tokens of a console session, as login, registration and refresh hand them out. */
export class SessionTokensDto {
  @ApiProperty({
    description: 'Bearer token for /console; short-lived (expiresIn), get the next one from /console/auth/refresh',
    example: 'eyJhbGciOi…',
  })
  accessToken: string;

  @ApiProperty({ description: 'Seconds the access token is valid for', example: 900 })
  expiresIn: number;

  @ApiProperty({
    format: 'date-time',
    description: 'When the access token stops working',
    example: '2026-11-21T08:45:00.000Z',
  })
  accessTokenExpiresAt: string;

  @ApiProperty({
    description:
      'Single-use token for POST /console/auth/refresh, which answers the next pair; keep it secret. ' +
      'Presenting one that was already used revokes the whole session.',
    example: 'gwrt_q3X0c9m2VtJk8Rz1yHc6bN4pL7sWfA5dE0gU2iO9xKe',
  })
  refreshToken: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When the refresh token dies unless used; each refresh moves it forward',
    example: '2026-12-21T08:30:00.000Z',
  })
  refreshTokenExpiresAt: string;
}

export class RefreshSessionDto {
  @ApiProperty({
    description: 'The refresh token of the latest login or refresh',
    example: 'gwrt_q3X0c9m2VtJk8Rz1yHc6bN4pL7sWfA5dE0gU2iO9xKe',
  })
  @IsString()
  @MaxLength(128)
  refreshToken: string;
}

export class ConsoleSessionDto {
  @ApiProperty({ format: 'uuid', example: '7c9e6679-7425-40de-944b-e07fc1f90ae7' })
  id: string;

  @ApiProperty({ format: 'date-time', description: 'When the session logged in', example: '2026-11-21T08:30:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', description: 'Its latest login or refresh', example: '2026-11-21T09:15:00.000Z' })
  lastUsedAt: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When it ends unless refreshed',
    example: '2026-12-21T09:15:00.000Z',
  })
  expiresAt: string;

  @ApiProperty({
    description: 'The user agent of the login, or null',
    example: 'Mozilla/5.0 (X11; Linux x86_64)',
    nullable: true,
    type: String,
  })
  userAgent: string | null;

  @ApiProperty({
    description: 'The client address of the login, or null',
    example: '203.0.113.7',
    nullable: true,
    type: String,
  })
  clientAddress: string | null;

  @ApiProperty({ description: 'Whether this is the session of the access token that asked', example: true })
  current: boolean;
}

export class ConsoleSessionListDto {
  @ApiProperty({ type: [ConsoleSessionDto], description: 'Live sessions, most recently used first (at most 100)' })
  data: ConsoleSessionDto[];
}

export class PasswordChangeDto {
  @ApiProperty({ description: 'The password the account has now', example: 'correct horse battery staple' })
  @IsString()
  @MaxLength(128)
  currentPassword: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'battery staple horse correct' })
  @IsString()
  @Length(8, 128, { message: 'newPassword must be 8 to 128 characters long' })
  newPassword: string;
}
