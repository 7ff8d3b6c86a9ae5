import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { formatUsd } from 'src/common/money/money';
import { ApiMoney } from 'src/common/openapi/money-property';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountResponseDto } from 'src/modules/accounts/dto/account.dto';
import { ApiKeyResponseDto } from 'src/modules/api-keys/dto/api-key.dto';
import { OpenHold } from 'src/modules/ledger/balance-gate.service';
import { TopupPageDto } from 'src/modules/payments/dto/topup.dto';
import { LedgerPageDto, OperatorBillPageDto, UsageRowDto } from 'src/modules/usage/dto/usage.dto';

/** An account as an operator sees it: the console's fields and whether it is suspended. */
export class AdminAccountDto extends AccountResponseDto {
  @ApiProperty({ description: 'Its keys are refused and its console is read-only', example: false })
  suspended: boolean;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  suspendedAt: string | null;

  @ApiProperty({ nullable: true, type: String, example: null, description: "The operator's note" })
  suspensionReason: string | null;

  @ApiProperty({ description: 'The account group: its price multiplier and default limits apply', example: 'default' })
  groupId: string;

  static fromEntity(account: AccountEntity): AdminAccountDto {
    return {
      ...AccountResponseDto.from(account),
      suspended: account.suspendedAt !== null,
      suspendedAt: account.suspendedAt?.toISOString() ?? null,
      suspensionReason: account.suspensionReason,
      groupId: account.groupId,
    };
  }
}

export class OpenHoldDto {
  @ApiProperty({ description: 'The x-request-id of the request running', example: 'req_01JD3W8KQ3Z0' })
  requestId: string;

  @ApiProperty({ format: 'uuid', nullable: true, type: String, example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  keyId: string | null;

  @ApiMoney({ description: 'USD held: the most the request can cost', example: '0.016384' })
  amount: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2026-11-24T08:30:00.000Z' })
  openedAt: string | null;

  static from(hold: OpenHold): OpenHoldDto {
    return {
      requestId: hold.requestId,
      keyId: hold.keyId,
      amount: formatUsd(hold.amount),
      openedAt: hold.openedAt?.toISOString() ?? null,
    };
  }
}

export class LiveHoldsDto {
  @ApiMoney({ description: 'USD held by the requests running now', example: '0.016384' })
  total: string;

  @ApiProperty({ type: [OpenHoldDto], description: 'Oldest first, at most 100' })
  data: OpenHoldDto[];
}

export class MonthlyTotalDto {
  @ApiProperty({ description: 'Calendar month (UTC)', example: '2026-11' })
  month: string;

  @ApiProperty({ example: 1200 })
  requests: number;

  @ApiProperty({ example: 480000 })
  promptTokens: number;

  @ApiProperty({ example: 96000 })
  completionTokens: number;

  @ApiMoney({ description: 'USD charged, exact', example: '2.16' })
  cost: string;
}

export class AccountDetailDto {
  @ApiProperty({ type: AdminAccountDto })
  account: AdminAccountDto;

  @ApiProperty({ type: LiveHoldsDto, description: 'What is held right now (from Redis), per running request' })
  holds: LiveHoldsDto;

  @ApiProperty({ type: [ApiKeyResponseDto], description: 'Its keys that are not deleted; never a secret' })
  keys: ApiKeyResponseDto[];

  @ApiProperty({
    type: [UsageRowDto],
    description: 'Daily totals of the last 31 days (UTC), as the console shows; more: GET …/usage',
  })
  daily: UsageRowDto[];

  @ApiProperty({ type: [MonthlyTotalDto], description: 'Monthly totals of the last 12 months (UTC), newest first' })
  monthly: MonthlyTotalDto[];

  @ApiProperty({ type: LedgerPageDto, description: 'The newest ledger entries; more: GET …/ledger?cursor=' })
  ledger: LedgerPageDto;

  @ApiProperty({
    type: OperatorBillPageDto,
    description: 'The newest bills (one per request); more: GET …/bills?cursor=',
  })
  bills: OperatorBillPageDto;

  @ApiProperty({ type: TopupPageDto, description: 'The newest top-ups; more: GET …/topups?cursor=' })
  topups: TopupPageDto;
}

export class SuspensionDto {
  @ApiPropertyOptional({ description: 'Why (kept for operators and in the audit log)', example: 'Chargeback' })
  @IsOptional()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
