import { Module } from '@nestjs/common';
import { PartitionMaintenanceService } from 'src/modules/partitions/partition-maintenance.service';
import { PartitionsRepository } from 'src/modules/partitions/partitions.repository';

/** The worker's upkeep of the month-partitioned books (usage_records, ledger_entries). */
@Module({
  providers: [PartitionsRepository, PartitionMaintenanceService],
  exports: [PartitionMaintenanceService],
})
export class PartitionsModule {}
