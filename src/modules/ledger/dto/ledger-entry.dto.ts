import { ApiProperty } from '@nestjs/swagger';
import { formatUsd } from 'src/common/money/money';
import { LEDGER_KINDS, LedgerEntryEntity, LedgerKind } from 'src/modules/ledger/ledger-entry.entity';

export class LedgerEntryResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: LEDGER_KINDS, example: 'adjustment' })
  kind: LedgerKind;

  @ApiProperty({ description: 'Signed amount in USD, exact decimal string', example: '25' })
  amount: string;

  @ApiProperty({ description: 'Balance after this entry, USD', example: '125.5' })
  balanceAfter: string;

  @ApiProperty({ format: 'date-time' })
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
