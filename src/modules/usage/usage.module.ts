import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { UsageController } from 'src/modules/usage/usage.controller';
import { UsageRepository } from 'src/modules/usage/usage.repository';
import { UsageService } from 'src/modules/usage/usage.service';

@Module({
  imports: [LedgerModule],
  controllers: [UsageController],
  providers: [UsageRepository, UsageService],
  exports: [UsageService],
})
export class UsageModule {}
