import { ApiProperty } from '@nestjs/swagger';

/** The error object (docs/errors.md), as every /v1, /console and /admin error carries it. */
export class ErrorObjectDto {
  @ApiProperty({
    description: 'What went wrong, for a person',
    example: 'spendLimit must be over $0 and at most $1000000.',
  })
  message: string;

  @ApiProperty({
    description: 'The class of error: invalid_request_error, requests (rate limits) or server_error',
    example: 'invalid_request_error',
  })
  type: string;

  @ApiProperty({
    description: 'The request field the error is about, or null',
    example: 'spendLimit',
    nullable: true,
    type: String,
  })
  param: string | null;

  @ApiProperty({
    description: 'A machine code such as insufficient_balance or key_spend_limit_reached, or null',
    example: 'key_spend_limit_reached',
    nullable: true,
    type: String,
  })
  code: string | null;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorObjectDto })
  error: ErrorObjectDto;
}
