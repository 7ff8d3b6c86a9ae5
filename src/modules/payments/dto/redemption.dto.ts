import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { CursorQueryDto } from 'src/common/http/date-range.dto';
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
  @ApiProperty({ format: 'uuid', example: '5d7e0c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6' })
  id: string;

  @ApiProperty({
    format: 'uuid',
    description: 'The codes made together',
    example: '0e6f2a4b-1c3d-4e5f-9a8b-7c6d5e4f3a2b',
  })
  batchId: string;

  @ApiProperty({ description: 'The code, shown this once', example: 'K7QX2-MPA9R-T4WZ8-HN3CD' })
  code: string;

  @ApiProperty({ description: 'The first group of the code: what lists show of it from now on', example: 'K7QX2' })
  prefix: string;

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

export const REDEMPTION_CODE_STATES = ['active', 'redeemed', 'voided', 'expired'] as const;
export type RedemptionCodeState = (typeof REDEMPTION_CODE_STATES)[number];

export class AdminRedemptionCodeQueryDto extends CursorQueryDto {
  @ApiPropertyOptional({ format: 'uuid', example: '0e6f2a4b-1c3d-4e5f-9a8b-7c6d5e4f3a2b' })
  @IsOptional()
  @IsUUID('all', { message: 'batchId must be a UUID' })
  batchId?: string;

  @ApiPropertyOptional({ enum: REDEMPTION_CODE_STATES, enumName: 'RedemptionCodeState', example: 'active' })
  @IsOptional()
  @IsIn(REDEMPTION_CODE_STATES, { message: 'status must be active, redeemed, voided or expired' })
  status?: RedemptionCodeState;
}

/** A code as lists show it: its prefix, never the code (only its hash is kept). */
export class AdminRedemptionCodeDto {
  @ApiProperty({ format: 'uuid', example: '5d7e0c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6' })
  id: string;

  @ApiProperty({ format: 'uuid', example: '0e6f2a4b-1c3d-4e5f-9a8b-7c6d5e4f3a2b' })
  batchId: string;

  @ApiProperty({
    description: 'The first group of the code; null for codes made before prefixes were kept',
    example: 'K7QX2',
    nullable: true,
    type: String,
  })
  prefix: string | null;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USD the code credits', example: '10' })
  amount: string;

  @ApiProperty({ enum: REDEMPTION_CODE_STATES, enumName: 'RedemptionCodeState', example: 'active' })
  status: RedemptionCodeState;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T08:30:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  expiresAt: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  redeemedAt: string | null;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    example: null,
    description: 'The account that redeemed it',
  })
  redeemedBy: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  voidedAt: string | null;
}

export class AdminRedemptionCodePageDto {
  @ApiProperty({ type: [AdminRedemptionCodeDto] })
  data: AdminRedemptionCodeDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxIDA4OjMwOjAwKzAwIiwiNWQ3ZSJd',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}

export class RedemptionBatchVoidDto {
  @ApiProperty({ format: 'uuid', example: '0e6f2a4b-1c3d-4e5f-9a8b-7c6d5e4f3a2b' })
  batchId: string;

  @ApiProperty({ description: 'Codes this call voided (unredeemed, not voided before)', example: 18 })
  voided: number;

  @ApiProperty({ description: 'Codes of the batch already redeemed: they stay as they are', example: 2 })
  redeemed: number;
}
