import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsIn, IsOptional } from 'class-validator';
import { DateRangeQueryDto } from 'src/common/http/date-range.dto';

export const MARGIN_GROUPINGS = ['day', 'model', 'channel'] as const;
export type MarginGrouping = (typeof MARGIN_GROUPINGS)[number];
const GROUPING_MESSAGE = 'groupBy must be a list of day, model and channel, each at most once';
const SIGNED_MONEY = '^-?\\d+(\\.\\d{1,9})?$';

function groupingList({ value }: { value: unknown }): unknown {
  const parts: unknown[] = Array.isArray(value) ? (value as unknown[]) : [value];
  return parts.flatMap((part) => (typeof part === 'string' ? part.split(',') : [part]));
}

export class MarginQueryDto extends DateRangeQueryDto {
  @ApiPropertyOptional({
    description: 'The columns to total by, in order. Without it, by day',
    enum: MARGIN_GROUPINGS,
    enumName: 'MarginGrouping',
    isArray: true,
    example: ['day', 'model', 'channel'],
    default: ['day'],
  })
  @IsOptional()
  @Transform(groupingList)
  @ArrayMinSize(1, { message: GROUPING_MESSAGE })
  @ArrayMaxSize(MARGIN_GROUPINGS.length, { message: GROUPING_MESSAGE })
  @ArrayUnique(undefined, { message: GROUPING_MESSAGE })
  @IsIn(MARGIN_GROUPINGS, { each: true, message: GROUPING_MESSAGE })
  groupBy: MarginGrouping[] = ['day'];
}

const money = (description: string, example: string, nullable = false) =>
  ApiProperty({ type: String, pattern: SIGNED_MONEY, description, example, nullable });

export class MarginTotalsDto {
  @ApiProperty({ type: 'integer', example: 1200 })
  requests: number;

  @ApiProperty({ type: 'integer', example: 480000 })
  promptTokens: number;

  @ApiProperty({ type: 'integer', example: 96000 })
  completionTokens: number;

  @money('USD charged to the accounts', '2.16')
  revenue: string;

  @money("USD the upstreams charge; null when some requests' routes had no cost prices", '1.728', true)
  upstreamCost: string | null;

  @money('revenue − upstreamCost, USD (negative: a loss); null when the cost is not fully known', '0.432', true)
  margin: string | null;

  @ApiProperty({ description: 'Every request of the group had a route with cost prices', example: true })
  costKnown: boolean;

  @ApiProperty({ type: 'integer', description: 'Requests whose upstream cost is unknown', example: 0 })
  uncostedRequests: number;

  @money('Of revenue, what the uncosted requests brought', '0')
  uncostedRevenue: string;

  @money('USD the upstreams charge for the requests whose cost is known', '1.728')
  knownUpstreamCost: string;

  @money('Margin over the requests whose cost is known only', '0.432')
  knownMargin: string;
}

export class MarginRowDto extends MarginTotalsDto {
  @ApiPropertyOptional({ format: 'date', example: '2026-11-24', description: 'When grouped by day (UTC)' })
  date?: string;

  @ApiPropertyOptional({ example: 'gpt-4o', description: 'When grouped by model' })
  model?: string;

  @ApiPropertyOptional({ example: 'openai-main', description: 'When grouped by channel' })
  channelId?: string;
}

export class MarginReportDto {
  @ApiProperty({ type: [MarginRowDto] })
  data: MarginRowDto[];

  @ApiProperty({ type: MarginTotalsDto, description: 'The whole range' })
  total: MarginTotalsDto;
}
