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
  @ApiProperty({ format: 'uuid' })
  accountId: string;

  @ApiProperty({ description: 'A model id, or `*` for every model without its own override', example: 'gpt-4o' })
  modelId: string;

  @ApiProperty({ type: Number, nullable: true })
  rpm: number | null;

  @ApiProperty({ type: Number, nullable: true })
  tpm: number | null;

  @ApiProperty({ type: Number, nullable: true })
  endUserRpm: number | null;

  @ApiProperty({ type: Number, nullable: true })
  endUserTpm: number | null;

  @ApiProperty({ format: 'date-time' })
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
