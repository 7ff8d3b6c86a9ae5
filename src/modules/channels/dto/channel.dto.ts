import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Length, Max, Min } from 'class-validator';
import { CHANNEL_TYPES, ChannelEntity, ChannelType } from 'src/modules/channels/channel.entity';

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

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  updatedAt: string;

  static from(channel: ChannelEntity): ChannelResponseDto {
    return {
      id: channel.id,
      type: channel.type,
      baseUrl: channel.baseUrl,
      maskedApiKey: channel.apiKeyHint,
      priority: channel.priority,
      weight: channel.weight,
      enabled: channel.enabled,
      createdAt: channel.createdAt.toISOString(),
      updatedAt: channel.updatedAt.toISOString(),
    };
  }
}

export class ChannelListResponseDto {
  @ApiProperty({ type: [ChannelResponseDto] })
  data: ChannelResponseDto[];
}
