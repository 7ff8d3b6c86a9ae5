import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { DateRangeQueryDto, PageQueryDto } from 'src/common/http/date-range.dto';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';

export const USAGE_GROUPINGS = ['day', 'model', 'key'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

/** Filters shared by the usage totals and the bills. */
class UsageFilterDto {
  @ApiPropertyOptional({ example: 'gpt-4o' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  model?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'keyId must be a UUID' })
  keyId?: string;
}

export class UsageQueryDto extends IntersectionType(DateRangeQueryDto, UsageFilterDto) {
  @ApiPropertyOptional({ enum: USAGE_GROUPINGS, default: 'day' })
  @IsOptional()
  @IsIn(USAGE_GROUPINGS, { message: 'groupBy must be one of: day, model, key' })
  groupBy: UsageGrouping = 'day';
}

export class BillsQueryDto extends IntersectionType(PageQueryDto, UsageFilterDto) {}

export class UsageRowDto {
  @ApiPropertyOptional({ description: 'With groupBy=day', example: '2026-11-21' })
  date?: string;

  @ApiPropertyOptional({ description: 'With groupBy=model', example: 'gpt-4o' })
  model?: string;

  @ApiPropertyOptional({ description: 'With groupBy=key', format: 'uuid' })
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

  @ApiProperty({ description: 'USD charged, exact decimal string', example: '0.064' })
  cost: string;
}

export class UsageListDto {
  @ApiProperty({ type: [UsageRowDto] })
  data: UsageRowDto[];
}

export class BillDto {
  @ApiProperty({ description: 'The x-request-id of the completion', example: 'req_…' })
  requestId: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ example: 'gpt-4o' })
  model: string;

  @ApiProperty({ format: 'uuid' })
  keyId: string;

  @ApiProperty()
  promptTokens: number;

  @ApiProperty()
  completionTokens: number;

  @ApiProperty({ description: 'Of promptTokens, read from the upstream cache (at the cached price)' })
  cachedTokens: number;

  @ApiProperty({ description: 'Of promptTokens, written to the upstream cache (at the cache-write price)' })
  cacheWriteTokens: number;

  @ApiProperty({ description: 'Of completionTokens, spent reasoning (at the output price)' })
  reasoningTokens: number;

  @ApiProperty({ description: 'USD charged, exact decimal string', example: '0.0075' })
  cost: string;
}

export class BillPageDto {
  @ApiProperty({ type: [BillDto] })
  data: BillDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}

export class LedgerPageDto {
  @ApiProperty({ type: [LedgerEntryResponseDto] })
  data: LedgerEntryResponseDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor: string | null;
}
