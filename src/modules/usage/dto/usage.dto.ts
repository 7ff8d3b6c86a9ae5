import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import { DateRangeQueryDto, PageQueryDto } from 'src/common/http/date-range.dto';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';

export const USAGE_GROUPINGS = ['day', 'model', 'key'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];
const GROUPING_MESSAGE = 'groupBy must be a list of day, model and key, each at most once';

/** `groupBy=day,model` and `groupBy=day&groupBy=model` both read as ['day', 'model']. */
function groupingList({ value }: { value: unknown }): unknown {
  const parts: unknown[] = Array.isArray(value) ? (value as unknown[]) : [value];
  return parts.flatMap((part) => (typeof part === 'string' ? part.split(',') : [part]));
}

/** Filters shared by the usage totals and the bills. */
class UsageFilterDto {
  @ApiPropertyOptional({ example: 'gpt-4o' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  model?: string;

  @ApiPropertyOptional({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  @IsOptional()
  @IsUUID('all', { message: 'keyId must be a UUID' })
  keyId?: string;
}

export class UsageQueryDto extends IntersectionType(DateRangeQueryDto, UsageFilterDto) {
  @ApiPropertyOptional({
    description: 'The columns to total by, in order: `day,model` gives one row per day and model. Without it, by day',
    enum: USAGE_GROUPINGS,
    enumName: 'UsageGrouping',
    isArray: true,
    example: ['day', 'model'],
    default: ['day'],
  })
  @IsOptional()
  @Transform(groupingList)
  @ArrayMinSize(1, { message: GROUPING_MESSAGE })
  @ArrayMaxSize(USAGE_GROUPINGS.length, { message: GROUPING_MESSAGE })
  @ArrayUnique(undefined, { message: GROUPING_MESSAGE })
  @IsIn(USAGE_GROUPINGS, { each: true, message: GROUPING_MESSAGE })
  groupBy: UsageGrouping[] = ['day'];
}

/** Ids as clients and the gateway write them: printable ASCII without spaces, at most 200 characters. */
export const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

export class BillsQueryDto extends IntersectionType(PageQueryDto, UsageFilterDto) {
  @ApiPropertyOptional({ description: 'The x-request-id the gateway answered the request with', example: 'req_…' })
  @IsOptional()
  @Matches(REQUEST_ID, { message: 'requestId must be 1 to 200 printable characters without spaces' })
  requestId?: string;

  @ApiPropertyOptional({ description: 'The X-Request-Id your client sent with the request', example: 'my-trace-42' })
  @IsOptional()
  @Matches(REQUEST_ID, { message: 'clientRequestId must be 1 to 200 printable characters without spaces' })
  clientRequestId?: string;
}

export class UsageRowDto {
  @ApiPropertyOptional({ description: 'When grouped by day', example: '2026-11-21', format: 'date' })
  date?: string;

  @ApiPropertyOptional({ description: 'When grouped by model', example: 'gpt-4o' })
  model?: string;

  @ApiPropertyOptional({
    description: 'When grouped by key',
    format: 'uuid',
    example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c',
  })
  keyId?: string;

  @ApiProperty({ example: 42 })
  requests: number;

  @ApiProperty({ example: 12000 })
  promptTokens: number;

  @ApiProperty({ example: 3400 })
  completionTokens: number;

  @ApiProperty({ description: 'Of promptTokens, read from the upstream cache (at the cached price)', example: 8000 })
  cachedTokens: number;

  @ApiProperty({ description: 'Of promptTokens, written to the upstream cache (at the cache-write price)', example: 0 })
  cacheWriteTokens: number;

  @ApiProperty({ description: 'Of completionTokens, spent reasoning (at the output price)', example: 1200 })
  reasoningTokens: number;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USD charged, exact decimal string', example: '0.064' })
  cost: string;
}

export class UsageListDto {
  @ApiProperty({ type: [UsageRowDto] })
  data: UsageRowDto[];
}

export class BillDto {
  @ApiProperty({ description: 'The x-request-id of the completion', example: 'req_…' })
  requestId: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiProperty({ example: 'gpt-4o' })
  model: string;

  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  keyId: string;

  @ApiProperty({ example: 12000 })
  promptTokens: number;

  @ApiProperty({ example: 3400 })
  completionTokens: number;

  @ApiProperty({ description: 'Of promptTokens, read from the upstream cache (at the cached price)', example: 8000 })
  cachedTokens: number;

  @ApiProperty({ description: 'Of promptTokens, written to the upstream cache (at the cache-write price)', example: 0 })
  cacheWriteTokens: number;

  @ApiProperty({ description: 'Of completionTokens, spent reasoning (at the output price)', example: 1200 })
  reasoningTokens: number;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USD charged, exact decimal string', example: '0.0075' })
  cost: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The client's own X-Request-Id, when it sent a valid one (echoed as x-client-request-id)",
    example: 'my-trace-42',
  })
  clientRequestId: string | null;
}

export class BillPageDto {
  @ApiProperty({ type: [BillDto] })
  data: BillDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}

/** A bill as an operator sees it: with what the upstream said of the request, which customers never see. */
export class OperatorBillDto extends BillDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The provider's own id of the request that answered (x-request-id, request-id, …), when it sent one",
    example: 'req_abc123',
  })
  providerRequestId: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'Milliseconds from sending the upstream request to its first byte; null on bills from before it was kept',
    example: 240,
  })
  firstByteMs: number | null;
}

export class OperatorBillPageDto {
  @ApiProperty({ type: [OperatorBillDto] })
  data: OperatorBillDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}

export class LedgerPageDto {
  @ApiProperty({ type: [LedgerEntryResponseDto] })
  data: LedgerEntryResponseDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}
