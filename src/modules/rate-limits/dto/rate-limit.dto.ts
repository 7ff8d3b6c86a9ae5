import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min, ValidateIf } from 'class-validator';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';

const LIMIT_MAX = 2_000_000_000;

export class RateLimitUpsertDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: "Requests per minute; null keeps the model's default",
    example: 600,
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(LIMIT_MAX)
  rpm: number | null = null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: "Tokens per minute; null keeps the model's default",
    example: 1000000,
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(LIMIT_MAX)
  tpm: number | null = null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'Requests per minute for each end user (`user` field); null: no per-user limit',
    example: 10,
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(LIMIT_MAX)
  endUserRpm: number | null = null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'Tokens per minute for each end user; null: no per-user limit',
    example: 20000,
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(LIMIT_MAX)
  endUserTpm: number | null = null;
}

export class RateLimitResponseDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  accountId: string;

  @ApiProperty({ description: 'A model id, or `*` for every model without its own override', example: 'gpt-4o' })
  modelId: string;

  @ApiProperty({ example: 60, type: Number, nullable: true })
  rpm: number | null;

  @ApiProperty({ example: 100000, type: Number, nullable: true })
  tpm: number | null;

  @ApiProperty({ example: 10, type: Number, nullable: true })
  endUserRpm: number | null;

  @ApiProperty({ example: 20000, type: Number, nullable: true })
  endUserTpm: number | null;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  updatedAt: string;

  static from(row: AccountRateLimitEntity): RateLimitResponseDto {
    return {
      accountId: row.accountId,
      modelId: row.modelId,
      rpm: row.rpm,
      tpm: row.tpm,
      endUserRpm: row.endUserRpm,
      endUserTpm: row.endUserTpm,
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class RateLimitListDto {
  @ApiProperty({ type: [RateLimitResponseDto] })
  data: RateLimitResponseDto[];
}
