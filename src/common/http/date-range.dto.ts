import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ApiError } from 'src/common/errors/api-error';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export class DateRangeQueryDto {
  @ApiPropertyOptional({ description: 'First day, inclusive (UTC)', example: '2026-11-01' })
  @IsOptional()
  @Matches(ISO_DATE, { message: 'from must be a date like 2026-11-21' })
  from?: string;

  @ApiPropertyOptional({ description: 'Last day, inclusive (UTC)', example: '2026-11-21' })
  @IsOptional()
  @Matches(ISO_DATE, { message: 'to must be a date like 2026-11-21' })
  to?: string;
}

/** A keyset page: the cursor of the previous page and how many rows. */
export class CursorQueryDto {
  @ApiPropertyOptional({
    description: 'The nextCursor of the previous page',
    example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0',
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  cursor?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50, example: 50, type: 'integer' })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 200' })
  @Min(1, { message: 'limit must be an integer from 1 to 200' })
  @Max(200, { message: 'limit must be an integer from 1 to 200' })
  limit: number = 50;
}

/** A page of rows within a range of days. */
export class PageQueryDto extends IntersectionType(DateRangeQueryDto, CursorQueryDto) {}

export interface DayRange {
  /** Inclusive first day, or null for no lower bound. */
  from: string | null;
  /** Inclusive last day, or null for no upper bound. */
  to: string | null;
}

/** Checks the dates exist (2026-02-30 does not) and are in order. */
export function dayRange(query: DateRangeQueryDto): DayRange {
  for (const param of ['from', 'to'] as const) {
    const value = query[param];
    const parsed = value === undefined ? null : new Date(`${value}T00:00:00Z`);
    if (parsed && (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value)) {
      throw ApiError.invalid(`${param} is not a real date: ${value}.`, param);
    }
  }
  if (query.from && query.to && query.from > query.to) {
    throw ApiError.invalid('from must not be after to.', 'from');
  }
  return { from: query.from ?? null, to: query.to ?? null };
}
