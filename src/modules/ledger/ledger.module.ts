import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

@Module({
  imports: [TypeOrmModule.forFeature([LedgerEntryEntity])],
  providers: [LedgerRepository, BalanceGateService],
  exports: [LedgerRepository, BalanceGateService],
})
export class LedgerModule {}
