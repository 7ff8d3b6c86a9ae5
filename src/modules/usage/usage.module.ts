import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { AdminRequestsController } from 'src/modules/usage/admin-requests.controller';
import { RequestLogRepository } from 'src/modules/usage/request-log.repository';
import { RequestLogService } from 'src/modules/usage/request-log.service';
import { UsageController } from 'src/modules/usage/usage.controller';
import { UsageRepository } from 'src/modules/usage/usage.repository';
import { UsageService } from 'src/modules/usage/usage.service';

@Module({
  imports: [LedgerModule],
  controllers: [UsageController, AdminRequestsController],
  providers: [UsageRepository, UsageService, RequestLogRepository, RequestLogService],
  exports: [UsageService],
})
export class UsageModule {}
