import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

@Module({
  imports: [TypeOrmModule.forFeature([LedgerEntryEntity])],
  providers: [LedgerRepository],
  exports: [LedgerRepository],
})
export class LedgerModule {}
