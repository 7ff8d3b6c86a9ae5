import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { BalanceGate } from 'src/modules/ledger/balance-gate';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

@Module({
  imports: [TypeOrmModule.forFeature([LedgerEntryEntity])],
  providers: [LedgerRepository, BalanceGate],
  exports: [LedgerRepository, BalanceGate],
})
export class LedgerModule {}
