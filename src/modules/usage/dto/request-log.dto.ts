import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { CursorQueryDto } from 'src/common/http/date-range.dto';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { USAGE_STATUSES, UsageStatus } from 'src/modules/billing/usage-record.entity';
import { REQUEST_ID } from 'src/modules/usage/dto/usage.dto';

export class RequestLogQueryDto extends CursorQueryDto {
  @ApiPropertyOptional({ description: "The gateway's x-request-id of the request", example: 'req_…' })
  @IsOptional()
  @Matches(REQUEST_ID, { message: 'requestId must be 1 to 200 printable characters without spaces' })
  requestId?: string;

  @ApiPropertyOptional({ description: 'The X-Request-Id the client sent with it', example: 'my-trace-42' })
  @IsOptional()
  @Matches(REQUEST_ID, { message: 'clientRequestId must be 1 to 200 printable characters without spaces' })
  clientRequestId?: string;

  @ApiPropertyOptional({ format: 'uuid', example: '9b2f6c1d-4e3a-4f5b-8c7d-6e5f4a3b2c1d' })
  @IsOptional()
  @IsUUID('all', { message: 'accountId must be a UUID' })
  accountId?: string;

  @ApiPropertyOptional({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  @IsOptional()
  @IsUUID('all', { message: 'keyId must be a UUID' })
  keyId?: string;

  @ApiPropertyOptional({ example: 'gpt-4o' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  model?: string;

  @ApiPropertyOptional({ example: 'openai-main' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  channel?: string;

  @ApiPropertyOptional({
    description: 'How the request ended',
    enum: USAGE_STATUSES,
    enumName: 'UsageStatus',
    example: 'upstream_broken',
  })
  @IsOptional()
  @IsIn(USAGE_STATUSES, { message: 'status must be completed, client_aborted or upstream_broken' })
  status?: UsageStatus;

  @ApiPropertyOptional({
    description: 'Requests made at or after this time (ISO 8601)',
    example: '2026-11-21T08:00:00Z',
    format: 'date-time',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 time' })
  from?: string;

  @ApiPropertyOptional({
    description: 'Requests made before this time (ISO 8601, exclusive)',
    example: '2026-11-21T09:00:00Z',
    format: 'date-time',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 time' })
  to?: string;
}

/** One request as support sees it: metadata, counts and money, never what was sent or answered. */
export class RequestLogEntryDto {
  @ApiProperty({ description: "The gateway's x-request-id", example: 'req_…' })
  requestId: string;

  @ApiProperty({
    nullable: true,
    type: String,
    description: "The client's X-Request-Id, when it sent one",
    example: null,
  })
  clientRequestId: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: "The provider's request id for the attempt that answered, when it sent one",
    example: 'chatcmpl-…',
  })
  providerRequestId: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T08:30:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'uuid', example: '9b2f6c1d-4e3a-4f5b-8c7d-6e5f4a3b2c1d' })
  accountId: string;

  @ApiProperty({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  keyId: string;

  @ApiProperty({ example: 'gpt-4o' })
  model: string;

  @ApiProperty({ description: 'The channel that answered', example: 'openai-main' })
  channel: string;

  @ApiProperty({ enum: USAGE_STATUSES, enumName: 'UsageStatus', example: 'completed' })
  status: UsageStatus;

  @ApiProperty({ example: 12000 })
  promptTokens: number;

  @ApiProperty({ example: 3400 })
  completionTokens: number;

  @ApiProperty({ description: 'Of promptTokens, read from the upstream cache', example: 8000 })
  cachedTokens: number;

  @ApiProperty({ description: 'Of promptTokens, written to the upstream cache', example: 0 })
  cacheWriteTokens: number;

  @ApiProperty({ description: 'Of completionTokens, spent reasoning', example: 1200 })
  reasoningTokens: number;

  @ApiProperty({
    enum: ['upstream', 'estimated'],
    enumName: 'UsageSource',
    description: 'Who counted the tokens',
    example: 'upstream',
  })
  usageSource: 'upstream' | 'estimated';

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: "USD the usage costs at the request's prices",
    example: '0.0075',
  })
  cost: string;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USD actually debited', example: '0.0075' })
  charged: string;

  @ApiProperty({ description: 'Milliseconds the upstream took in all', example: 2300 })
  upstreamLatencyMs: number;

  @ApiProperty({ nullable: true, type: Number, description: 'Milliseconds to the upstream’s first byte', example: 410 })
  firstByteMs: number | null;
}

export class RequestLogPageDto {
  @ApiProperty({ type: [RequestLogEntryDto] })
  data: RequestLogEntryDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxIDA4OjMwOjAwKzAwIiwicmVxXzEiXQ',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}
