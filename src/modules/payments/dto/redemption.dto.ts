import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';

export const MAX_CODES_PER_BATCH = 1_000;

export class RedemptionBatchCreateDto {
  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USD each code credits, exact decimal string', example: '10' })
  @IsString({ message: 'amount must be a decimal string in USD' })
  @MaxLength(32)
  amount: string;

  @ApiProperty({ minimum: 1, maximum: MAX_CODES_PER_BATCH, example: 20 })
  @IsInt({ message: `count must be an integer from 1 to ${MAX_CODES_PER_BATCH}` })
  @Min(1, { message: `count must be an integer from 1 to ${MAX_CODES_PER_BATCH}` })
  @Max(MAX_CODES_PER_BATCH, { message: `count must be an integer from 1 to ${MAX_CODES_PER_BATCH}` })
  count: number;

  @ApiPropertyOptional({
    example: '2026-11-21T09:00:00.000Z',
    format: 'date-time',
    description: 'After this the codes no longer work',
  })
  @IsOptional()
  @IsDateString({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;
}

export class RedemptionCodeDto {
  @ApiProperty({ description: 'The code, shown this once', example: 'K7QX2-MPA9R-T4WZ8-HN3CD' })
  code: string;

  @ApiProperty({ pattern: MONEY_PATTERN, example: '10' })
  amount: string;

  @ApiProperty({ example: '2026-11-21T09:00:00.000Z', format: 'date-time', nullable: true, type: String })
  expiresAt: string | null;
}

export class RedemptionBatchDto {
  @ApiProperty({ type: [RedemptionCodeDto] })
  data: RedemptionCodeDto[];
}

export class RedemptionCreateDto {
  @ApiProperty({ example: 'K7QX2-MPA9R-T4WZ8-HN3CD' })
  @IsString({ message: 'code must be a string' })
  @MaxLength(64, { message: 'code is not a valid redemption code' })
  code: string;
}
