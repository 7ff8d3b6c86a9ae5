import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { CHANNEL_TYPES, ChannelEntity, ChannelType } from 'src/modules/channels/channel.entity';
import { ChannelTimeouts } from 'src/modules/channels/channel-timeouts';
import { BreakerState, StoredBreaker } from 'src/modules/channels/health/breaker-policy';

const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 3_600_000;

/** Each field in ms; one left out takes the process default (UPSTREAM_*_TIMEOUT_MS). */
export class ChannelTimeoutsDto {
  @ApiPropertyOptional({ description: 'Connecting to the upstream (default 5000)', example: 5000 })
  @IsOptional()
  @IsInt()
  @Min(MIN_TIMEOUT_MS)
  @Max(MAX_TIMEOUT_MS)
  connectMs?: number;

  @ApiPropertyOptional({ description: 'First byte of a non-streamed answer (default 300000)', example: 300000 })
  @IsOptional()
  @IsInt()
  @Min(MIN_TIMEOUT_MS)
  @Max(MAX_TIMEOUT_MS)
  firstByteMs?: number;

  @ApiPropertyOptional({ description: 'First byte of a streamed answer (default 30000)', example: 30000 })
  @IsOptional()
  @IsInt()
  @Min(MIN_TIMEOUT_MS)
  @Max(MAX_TIMEOUT_MS)
  streamFirstByteMs?: number;

  @ApiPropertyOptional({
    description: 'Longest silence between two chunks of an answer (default 60000)',
    example: 60000,
  })
  @IsOptional()
  @IsInt()
  @Min(MIN_TIMEOUT_MS)
  @Max(MAX_TIMEOUT_MS)
  silenceMs?: number;
}

export class ChannelUpsertDto {
  @ApiProperty({
    enumName: 'ChannelType',
    enum: CHANNEL_TYPES,
    description: '`openai` is any OpenAI-compatible upstream',
    example: 'openai',
  })
  @IsIn(CHANNEL_TYPES)
  type: ChannelType;

  @ApiProperty({ description: 'Base URL of the upstream API', example: 'http://127.0.0.1:9000/v1' })
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  baseUrl: string;

  @ApiProperty({ description: 'The upstream API key; stored encrypted, never returned', example: 'upstream-secret' })
  @IsString()
  @Length(1, 1000)
  apiKey: string;

  @ApiPropertyOptional({ description: 'Higher priorities are tried first', default: 0, example: 0 })
  @IsOptional()
  @IsInt()
  @Min(-1000)
  @Max(1000)
  priority: number = 0;

  @ApiPropertyOptional({ description: 'Share of traffic among channels of the same priority', default: 1, example: 1 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1000)
  weight: number = 1;

  @ApiPropertyOptional({ example: true, default: true })
  @IsOptional()
  @IsBoolean()
  enabled: boolean = true;

  @ApiPropertyOptional({ type: ChannelTimeoutsDto, description: 'Timeouts of this channel; any left out: the default' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ChannelTimeoutsDto)
  timeouts?: ChannelTimeoutsDto;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description:
      'Switch the channel off (`enabled: false`) once its breaker has stayed open this many hours; null or absent: never',
    example: 24,
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.0001)
  @Max(8760)
  autoDisableAfterHours?: number | null;
}

export class ChannelTimeoutsResponseDto implements ChannelTimeouts {
  @ApiProperty({ example: 5000 })
  connectMs: number;

  @ApiProperty({ example: 300000 })
  firstByteMs: number;

  @ApiProperty({ example: 30000 })
  streamFirstByteMs: number;

  @ApiProperty({ example: 60000 })
  silenceMs: number;
}

export class ChannelHealthDto {
  @ApiProperty({
    enumName: 'BreakerState',
    enum: ['closed', 'half_open', 'open'],
    description: 'The circuit breaker, shared by every API process',
    example: 'closed',
  })
  state: BreakerState;

  @ApiProperty({ description: 'Failures in a row, over every API process', example: 0 })
  consecutiveFailures: number;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Open: not tried before then; half-open: when the probe in flight gives up',
    example: '2026-11-21T08:31:00.000Z',
  })
  openUntil: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The last failure, without keys, addresses or organisation ids',
    example: 'upstream answered 503',
  })
  lastError: string | null;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Last proper answer (to within 10 s)',
    example: '2026-11-21T08:30:00.000Z',
  })
  lastOkAt: string | null;

  static from(stored: StoredBreaker): ChannelHealthDto {
    const at = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);
    return {
      state: stored.state,
      consecutiveFailures: stored.failures,
      openUntil: stored.state === 'closed' ? null : at(stored.openUntil),
      lastError: stored.lastError,
      lastOkAt: at(stored.lastOkAt),
    };
  }
}

export class ChannelResponseDto {
  @ApiProperty({ example: 'openai-main' })
  id: string;

  @ApiProperty({ example: 'openai', enumName: 'ChannelType', enum: CHANNEL_TYPES })
  type: ChannelType;

  @ApiProperty({ example: 'http://127.0.0.1:9000/v1' })
  baseUrl: string;

  @ApiProperty({
    description: 'A masked hint of the upstream key; the key itself is never returned',
    example: 'ups…cret',
  })
  maskedApiKey: string;

  @ApiProperty({ example: 0 })
  priority: number;

  @ApiProperty({ example: 1 })
  weight: number;

  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({
    type: ChannelTimeoutsResponseDto,
    description: "Effective timeouts: the channel's own or the defaults",
  })
  timeouts: ChannelTimeoutsResponseDto;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Hours of an open breaker after which the channel is switched off; null: never',
    example: 24,
  })
  autoDisableAfterHours: number | null;

  @ApiProperty({ type: ChannelHealthDto })
  health: ChannelHealthDto;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  updatedAt: string;

  static from(channel: ChannelEntity, timeouts: ChannelTimeouts, health: StoredBreaker): ChannelResponseDto {
    return {
      id: channel.id,
      type: channel.type,
      baseUrl: channel.baseUrl,
      maskedApiKey: channel.apiKeyHint,
      priority: channel.priority,
      weight: channel.weight,
      enabled: channel.enabled,
      timeouts,
      autoDisableAfterHours: channel.autoDisableAfterHours,
      health: ChannelHealthDto.from(health),
      createdAt: channel.createdAt.toISOString(),
      updatedAt: channel.updatedAt.toISOString(),
    };
  }
}

export class ChannelTestDto {
  @ApiPropertyOptional({
    description: "The upstream's name of the model to ask; default: the one the first route to this channel names",
    example: 'gpt-4o-mini',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  model?: string;
}

export class ChannelTestResultDto {
  @ApiProperty({
    description: 'The channel answered a minimal completion properly; its breaker is closed',
    example: true,
  })
  ok: boolean;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The upstream's HTTP status; null when none came",
    example: 200,
  })
  status: number | null;

  @ApiProperty({ description: 'From sending to the whole answer read', example: 850 })
  latencyMs: number;

  @ApiProperty({ type: Number, nullable: true, description: "From sending to the response's first byte", example: 420 })
  firstByteMs: number | null;

  @ApiPropertyOptional({
    description: 'What went wrong, without keys, addresses or organisation ids',
    example: 'upstream answered 401',
  })
  error?: string;
}

export class ChannelListResponseDto {
  @ApiProperty({ type: [ChannelResponseDto] })
  data: ChannelResponseDto[];
}
