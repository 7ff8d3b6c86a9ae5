import { Module } from '@nestjs/common';
import { AdminReportsController } from 'src/modules/reports/admin-reports.controller';
import { ReportsRepository } from 'src/modules/reports/reports.repository';
import { ReportsService } from 'src/modules/reports/reports.service';

/** The operator's money reports (margin per day, model and channel), read from settlement's rollups. */
@Module({
  controllers: [AdminReportsController],
  providers: [ReportsRepository, ReportsService],
})
export class ReportsModule {}
