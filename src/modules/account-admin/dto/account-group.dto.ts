import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { AccountGroupWithMembers } from 'src/modules/account-groups/account-groups.repository';
import { formatMultiplier, MULTIPLIER_PATTERN, multiplierPpmOf } from 'src/common/money/price-multiplier';

const LIMIT_MAX = 2_000_000_000;

/** PUT /admin/groups/{groupId}: the whole group; absent optional fields take their defaults. */
export class AccountGroupUpsertDto {
  @ApiProperty({
    description:
      'What the group pays relative to the catalog prices: a decimal string with at most 6 decimals, more than 0 and at most 100 (`0.8` is 20 % off)',
    example: '0.8',
    pattern: MULTIPLIER_PATTERN.source,
  })
  @IsString()
  @Matches(MULTIPLIER_PATTERN, { message: 'priceMultiplier must be a decimal string with at most 6 decimals' })
  priceMultiplier: string;

  @ApiPropertyOptional({
    description: 'A note for operators',
    example: 'Resellers on the wholesale contract',
    maxLength: 500,
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description: string = '';

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: "Requests per minute on every model for the group's accounts; null: each model's own default",
    example: 3000,
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
    description: "Tokens per minute on every model for the group's accounts; null: each model's own default",
    example: 5000000,
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(LIMIT_MAX)
  tpm: number | null = null;
}

export class AccountGroupDto {
  @ApiProperty({ example: 'wholesale' })
  id: string;

  @ApiProperty({ example: 'Resellers on the wholesale contract' })
  description: string;

  @ApiProperty({ description: 'Decimal string; what the accounts pay is the catalog price times this', example: '0.8' })
  priceMultiplier: string;

  @ApiProperty({ type: Number, nullable: true, example: 3000 })
  rpm: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 5000000 })
  tpm: number | null;

  @ApiProperty({ description: 'How many accounts are in the group', example: 12 })
  accounts: number;

  @ApiProperty({ format: 'date-time', example: '2026-12-02T08:30:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-02T08:30:00.000Z' })
  updatedAt: string;

  static from({ group, accounts }: AccountGroupWithMembers): AccountGroupDto {
    return {
      id: group.id,
      description: group.description,
      priceMultiplier: formatMultiplier(multiplierPpmOf(group)),
      rpm: group.rpm,
      tpm: group.tpm,
      accounts,
      createdAt: group.createdAt.toISOString(),
      updatedAt: group.updatedAt.toISOString(),
    };
  }
}

export class AccountGroupListDto {
  @ApiProperty({ type: [AccountGroupDto] })
  data: AccountGroupDto[];
}

export class AccountGroupAssignmentDto {
  @ApiProperty({ description: 'The group to move the account into', example: 'wholesale' })
  @IsString()
  @MaxLength(64)
  groupId: string;
}
