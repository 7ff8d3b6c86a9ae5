import { ApiProperty } from '@nestjs/swagger';
import { formatUsd } from 'src/common/money/money';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { LEDGER_KINDS, LedgerEntryEntity, LedgerKind } from 'src/modules/ledger/ledger-entry.entity';

export class LedgerEntryResponseDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  id: string;

  @ApiProperty({ enumName: 'LedgerEntryKind', enum: LEDGER_KINDS, example: 'adjustment' })
  kind: LedgerKind;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'Signed amount in USD, exact decimal string', example: '25' })
  amount: string;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'Balance after this entry, USD', example: '125.5' })
  balanceAfter: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiProperty({ description: 'What caused the entry (request id, top-up id, adjustment id)', example: 'adj_…' })
  reference: string;

  static from(entry: LedgerEntryEntity): LedgerEntryResponseDto {
    return {
      id: entry.id,
      kind: entry.kind,
      amount: formatUsd(entry.amount),
      balanceAfter: formatUsd(entry.balanceAfter),
      createdAt: entry.createdAt.toISOString(),
      reference: entry.reference,
    };
  }
}
