import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { formatUsd } from 'src/common/money/money';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';

export class AccountResponseDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'Prepaid balance in USD, exact decimal string', example: '12.5' })
  balance: string;

  @ApiProperty({ example: 'K7QX2MPA' })
  referralCode: string;

  @ApiProperty({
    description: 'The owner followed the link mailed to the address; until then no keys or top-ups (when required)',
    example: true,
  })
  emailVerified: boolean;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  static from(account: AccountEntity): AccountResponseDto {
    return {
      id: account.id,
      email: account.email,
      balance: formatUsd(account.balance),
      referralCode: account.referralCode,
      emailVerified: account.emailVerifiedAt !== null,
      createdAt: account.createdAt.toISOString(),
    };
  }
}

export class AccountListResponseDto {
  @ApiProperty({ type: [AccountResponseDto] })
  data: AccountResponseDto[];
}

export class AccountSearchQueryDto {
  @ApiPropertyOptional({ description: 'Part of the e-mail address, case-insensitive', example: 'ada@' })
  @IsOptional()
  @IsString()
  @MaxLength(320)
  email?: string;
}

export class AdjustmentCreateDto {
  @ApiProperty({
    description: 'USD, exact decimal string with at most 9 decimals; negative debits',
    example: '25',
    pattern: '^-?\\d{1,9}(\\.\\d{1,9})?$',
  })
  @IsString()
  @Matches(/^-?\d{1,9}(\.\d{1,9})?$/, {
    message: 'amount must be a decimal string in USD (at most 9 whole digits and 9 decimals)',
  })
  amount: string;

  @ApiProperty({ description: 'Why the balance changes (kept with the ledger entry)', example: 'Goodwill credit' })
  @IsString()
  @Length(1, 500)
  reason: string;
}

export class AdjustmentResponseDto {
  @ApiProperty({ type: LedgerEntryResponseDto })
  entry: LedgerEntryResponseDto;

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: 'The account balance after the adjustment, USD',
    example: '125.5',
  })
  balance: string;
}
