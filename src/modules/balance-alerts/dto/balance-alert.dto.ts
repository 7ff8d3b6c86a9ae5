import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, ValidateIf } from 'class-validator';
import { ApiMoney } from 'src/common/openapi/money-property';

/** A positive USD amount of at most $1,000,000 (the service names the field when out of range). */
const THRESHOLD = /^\d{1,7}(\.\d{1,9})?$/;

export class BalanceAlertUpdateDto {
  @ApiProperty({
    description:
      'USD: one mail when the balance falls below it, then none until the balance is back at or above it. null: no alert.',
    example: '5',
    nullable: true,
    type: String,
    pattern: THRESHOLD.source,
  })
  @ValidateIf((_dto, value) => value !== null)
  @IsString({ message: 'lowBalanceThreshold must be a decimal string in USD, or null' })
  @Matches(THRESHOLD, { message: 'lowBalanceThreshold must be a decimal string in USD, at most 9 decimals' })
  lowBalanceThreshold: string | null;
}

export class BalanceAlertResponseDto {
  @ApiMoney({ description: 'USD; null: no alert', example: '5', nullable: true })
  lowBalanceThreshold: string | null;

  @ApiProperty({
    description: 'The alert mail went out and waits for the balance to be back at or above the threshold',
    example: false,
  })
  alertSent: boolean;
}
